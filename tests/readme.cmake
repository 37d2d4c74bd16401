# The README and docs/cluster.md run as tests: the library snippet built against the install
# tree, the first quick-start command from a clean clone, the Slurm recipe on a real
# one-node Slurm. Script tests that cannot run here exit 77 after printing
# "skipped: REASON", which CTest reports as Skipped.

# README "Using the library": both blocks, extracted at configure time of the snippet
# project, built against the prefix consumer.install fills, and run.
set(readme_snippet_build ${CMAKE_CURRENT_BINARY_DIR}/readme_snippet)
add_test(NAME readme_snippet.configure
         COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_SOURCE_DIR}/readme/snippet
                 -B ${readme_snippet_build} -G ${CMAKE_GENERATOR} -DCMAKE_BUILD_TYPE=Release
                 -DCONVLAB_README=${PROJECT_SOURCE_DIR}/README.md
                 -DCMAKE_PREFIX_PATH=${consumer_prefix}
                 -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
                 "-DCMAKE_CXX_FLAGS=${CMAKE_CXX_FLAGS}"
                 "-DCMAKE_EXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}")
add_test(NAME readme_snippet.build COMMAND ${CMAKE_COMMAND} --build ${readme_snippet_build})
set_tests_properties(readme_snippet.configure PROPERTIES LABELS cpu
                     FIXTURES_REQUIRED consumer_prefix FIXTURES_SETUP readme_snippet_configured)
set_tests_properties(readme_snippet.build PROPERTIES LABELS cpu
                     FIXTURES_REQUIRED readme_snippet_configured FIXTURES_SETUP readme_snippet_built)
# The program exits 2 with the reason when the algorithm cannot run here (no GPU).
set(readme_snippet_algorithms cpu.im2col)
if(CONVLAB_HAVE_FFTW)
  list(APPEND readme_snippet_algorithms cpu.fft)
endif()
if(CONVLAB_HAVE_CUDA)
  list(APPEND readme_snippet_algorithms cuda.fft)
endif()
foreach(algo IN LISTS readme_snippet_algorithms)
  add_test(NAME readme_snippet.run.${algo} COMMAND ${readme_snippet_build}/my_app ${algo})
  # Every output of the README's layer is 32 * 9 * 9 * (1 * 0.5) = 1296.
  set_tests_properties(readme_snippet.run.${algo} PROPERTIES LABELS cpu
                       FIXTURES_REQUIRED readme_snippet_built SKIP_RETURN_CODE 2
                       PASS_REGULAR_EXPRESSION "${algo}: y\\[0\\] = 1296, workspace")
endforeach()

# README quick start, first command: from a clone of the committed HEAD, as written, with
# the sweep cut to one small layer. It makes its own Release build, so only the Release
# build registers it (the sanitizer build would only build it a second time).
if(CMAKE_BUILD_TYPE STREQUAL "Release")
  add_test(NAME readme.first_command
           COMMAND ${CONVLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/readme/test_first_command.py
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/readme_first)
  # This build's compiler launcher (ccache), if any, through the environment CMake reads
  # it from, so a developer's rerun is quick; a fresh root has none and builds everything.
  set(readme_first_env)
  foreach(lang CXX CUDA)
    if(CMAKE_${lang}_COMPILER_LAUNCHER)
      list(APPEND readme_first_env "CMAKE_${lang}_COMPILER_LAUNCHER=${CMAKE_${lang}_COMPILER_LAUNCHER}")
    endif()
  endforeach()
  set_tests_properties(readme.first_command PROPERTIES LABELS cpu TIMEOUT 3600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "${readme_first_env}")
endif()

# docs/cluster.md's Slurm recipe, extracted from the page, on a one-node Slurm started by
# the test itself (needs slurm-wlm and munge: scripts/setup --tests; and root).
if(TARGET convbench)
  add_test(NAME docs.cluster_recipe
           COMMAND ${CONVLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/readme/test_cluster_recipe.py
                   ${PROJECT_SOURCE_DIR} $<TARGET_FILE:convbench>)
  set_tests_properties(docs.cluster_recipe PROPERTIES LABELS cpu TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endif()
