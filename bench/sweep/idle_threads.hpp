#pragma once
// Thread pools that libraries start on their own and leave spinning, stopped before a case is
// timed (docs/convbench.md, "What one case does").

namespace convbench {

/// Ends OpenBLAS's worker threads where the process has loaded OpenBLAS (a no-op elsewhere).
/// OpenBLAS starts them when it loads, and again at each call it runs on more than one thread,
/// and they then wait for work spinning on sched_yield for about 70 ms. A case timed inside
/// that window shares the cores with them: on the 2-CPU AMD EPYC VM the first case of a
/// two-thread sweep (cpu.im2col on a 1x1 layer, 0.5 ms a run) took 8 or 16 ms in most runs.
/// OpenBLAS starts the pool again at its next call that wants threads. Only for a process
/// where no other thread is inside OpenBLAS meanwhile, as convbench between its cases.
void stop_idle_blas_threads();

}  // namespace convbench
