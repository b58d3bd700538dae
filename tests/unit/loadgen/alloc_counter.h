// Counts heap allocations in the unit_loadgen binary, so tests can show the load path allocates
// nothing per request or response. allocation_test.cc replaces the global operator new (the
// standard way to observe allocations; it forwards to malloc) and defines Allocations().
#pragma once

namespace benchlab::test_alloc {

// Allocations through operator new so far, in every thread of the process.
long Allocations();

}  // namespace benchlab::test_alloc
