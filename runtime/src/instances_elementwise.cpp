// The copies, assignments and float arithmetic of pydd/instances.h,
// compiled once (see there why).
#define PYDD_DEFINE_INSTANCES
#include "pydd/instances.h"

namespace pydd {
#define PYDD_INSTANCE(...) template __VA_ARGS__;
PYDD_ELEMENTWISE_INSTANCES
}  // namespace pydd
