# The bad-input corpus (docs/reliability.md): the library half as a GoogleTest binary
# over library_cases.json, the convbench half as a Python runner over cli_cases.json.
# Included from tests/algorithms.cmake.
find_package(nlohmann_json 3 CONFIG REQUIRED)  # reads library_cases.json
convlab_add_test(test_bad_inputs_library cpu bad_inputs/test_bad_inputs_library.cpp)
target_link_libraries(test_bad_inputs_library PRIVATE nlohmann_json::nlohmann_json)
target_compile_definitions(test_bad_inputs_library PRIVATE
  CONVLAB_BAD_INPUTS_DIR="${CMAKE_CURRENT_LIST_DIR}")

if(TARGET convbench)
  add_test(NAME bad_inputs.cli
           COMMAND ${CONVLAB_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/run_cli_cases.py
                   --convbench $<TARGET_FILE:convbench>
                   --cases ${CMAKE_CURRENT_LIST_DIR}/cli_cases.json
                   --data ${PROJECT_SOURCE_DIR}/tests/data)
  set_tests_properties(bad_inputs.cli PROPERTIES LABELS cpu TIMEOUT 300)
endif()
