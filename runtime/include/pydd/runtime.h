// pydd runtime: the one header every generated kernel includes.
#pragma once

#include "pydd/abi.h"
#include "pydd/array.h"
#include "pydd/builtins.h"
#include "pydd/chunks.h"
#include "pydd/containers.h"
#include "pydd/elementwise.h"
#include "pydd/errors.h"
#include "pydd/library.h"
#include "pydd/linalg.h"
#include "pydd/manipulation.h"
#include "pydd/numeric.h"
#include "pydd/parallel.h"
#include "pydd/print.h"
#include "pydd/reduce.h"
#include "pydd/scalar.h"
#include "pydd/slice.h"
#include "pydd/sparse.h"
#include "pydd/ufuncs.h"

// Last: declares the library templates compiled once into libpydd_runtime.a.
#include "pydd/instances.h"
