// IP-NSW search, hand-written C++17: greedy descent through the upper levels,
// then a best-first search of level 0 with two binary heaps (std::push_heap /
// pop_heap over vectors). Queries run in parallel with OpenMP; each thread
// keeps its own heaps and a visited array marked with the query's number.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace py = pybind11;
using Arr64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using ArrF = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Entry = std::pair<double, int64_t>;  // (distance, id)

namespace {

struct Graph {
    const int64_t* indptr;   // levels x (n + 1)
    const int64_t* indices;
    int64_t n, levels;
    const int64_t* row(int64_t level) const { return indptr + level * (n + 1); }
};

// The negative inner product: smaller is more similar.
inline double dist(const double* a, const double* b, int64_t dim) {
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int64_t k = 0; k < dim; ++k) s += a[k] * b[k];
    return -s;
}

struct Workspace {
    std::vector<int64_t> visited;     // the query number that last saw each node
    std::vector<Entry> candidates;    // min-heap on distance
    std::vector<Entry> results;       // max-heap on distance: the front is the worst
    explicit Workspace(int64_t n) : visited(n, -1) {}
};

int64_t single_search_knn(const Graph& g, const double* data, int64_t dim, const double* q,
                          int64_t v_entry, int64_t ef, int64_t* out, int64_t n_results,
                          int64_t stamp, Workspace& ws) {
    int64_t num_calls = 0;
    int64_t v_curr = v_entry;
    double d_curr = dist(q, data + v_curr * dim, dim);
    ++num_calls;

    // greedy walk on each upper level, from the top down
    for (int64_t level = g.levels - 1; level > 0; --level) {
        const int64_t* ptr = g.row(level);
        bool changed = true;
        while (changed) {
            changed = false;
            const int64_t begin = ptr[v_curr], end = ptr[v_curr + 1];
            for (int64_t j = begin; j < end; ++j) {
                const int64_t v = g.indices[j];
                const double d = dist(q, data + v * dim, dim);
                ++num_calls;
                if (d < d_curr) {
                    d_curr = d;
                    v_curr = v;
                    changed = true;
                }
            }
        }
    }

    // best-first search of level 0
    const int64_t* ptr = g.row(0);
    auto& cand = ws.candidates;
    auto& res = ws.results;
    cand.clear();
    res.clear();
    const std::greater<Entry> min_order;
    ws.visited[v_curr] = stamp;
    cand.emplace_back(d_curr, v_curr);
    res.emplace_back(d_curr, v_curr);
    while (!cand.empty()) {
        std::pop_heap(cand.begin(), cand.end(), min_order);
        const auto [d_c, c] = cand.back();
        cand.pop_back();
        if (d_c > res.front().first) break;
        for (int64_t j = ptr[c]; j < ptr[c + 1]; ++j) {
            const int64_t e = g.indices[j];
            if (ws.visited[e] == stamp) continue;
            ws.visited[e] = stamp;
            const double d_e = dist(q, data + e * dim, dim);
            ++num_calls;
            if (static_cast<int64_t>(res.size()) < ef || d_e < res.front().first) {
                cand.emplace_back(d_e, e);
                std::push_heap(cand.begin(), cand.end(), min_order);
                res.emplace_back(d_e, e);
                std::push_heap(res.begin(), res.end());
                if (static_cast<int64_t>(res.size()) > ef) {
                    std::pop_heap(res.begin(), res.end());
                    res.pop_back();
                }
            }
        }
    }

    // the n_results best, best first
    std::sort(res.begin(), res.end());
    const int64_t k = std::min<int64_t>(n_results, res.size());
    for (int64_t i = 0; i < k; ++i) out[i] = res[i].second;
    return num_calls;
}

py::tuple search_knn(Arr64 indptr, Arr64 indices, ArrF data, ArrF queries, int64_t v_entry,
                     int64_t ef, int64_t n_results) {
    if (indptr.ndim() != 2 || data.ndim() != 2 || queries.ndim() != 2)
        throw std::invalid_argument("indptr, data and queries must be 2-D");
    const Graph g{indptr.data(), indices.data(), data.shape(0), indptr.shape(0)};
    const int64_t dim = data.shape(1), n_queries = queries.shape(0);
    const double* X = data.data();
    const double* Q = queries.data();
    Arr64 all_results({n_queries, n_results});
    int64_t* R = all_results.mutable_data();
    std::fill(R, R + n_queries * n_results, 0);
    int64_t total_calls = 0;
    {
        py::gil_scoped_release release;
#pragma omp parallel reduction(+ : total_calls)
        {
            Workspace ws(g.n);
#pragma omp for schedule(dynamic, 4)
            for (int64_t i = 0; i < n_queries; ++i)
                total_calls += single_search_knn(g, X, dim, Q + i * dim, v_entry, ef,
                                                 R + i * n_results, n_results, i, ws);
        }
    }
    return py::make_tuple(all_results, total_calls);
}

}  // namespace

PYBIND11_MODULE(cpp_version, m) {
    m.def("search_knn", &search_knn, py::arg("indptr"), py::arg("indices"), py::arg("data"),
          py::arg("queries"), py::arg("v_entry"), py::arg("ef"), py::arg("n_results"));
}
