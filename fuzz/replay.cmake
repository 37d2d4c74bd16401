# The fuzz corpus replayed by the normal build (any compiler, no libFuzzer): fuzz_replay
# feeds every file of fuzz/corpus to the fuzz target's LLVMFuzzerTestOneInput, whose
# invariants abort on a violation. Included from tests/algorithms.cmake. The fuzzer itself
# is fuzz/CMakeLists.txt (clang only).
add_executable(fuzz_replay ${CMAKE_CURRENT_LIST_DIR}/fuzz_descriptor.cpp
                           ${CMAKE_CURRENT_LIST_DIR}/replay_main.cpp)
target_link_libraries(fuzz_replay PRIVATE convlab)
target_include_directories(fuzz_replay PRIVATE ${PROJECT_SOURCE_DIR}/lib ${PROJECT_SOURCE_DIR})
add_test(NAME fuzz.replay COMMAND fuzz_replay ${CMAKE_CURRENT_LIST_DIR}/corpus)
set_tests_properties(fuzz.replay PROPERTIES LABELS cpu TIMEOUT 120)
