// Prints the library's default thread count, for the affinity test (taskset -c 0 must give 1).
#include <convlab/threads.hpp>
#include <cstdio>

int main() {
  std::printf("%d\n", convlab::num_threads());
  return 0;
}
