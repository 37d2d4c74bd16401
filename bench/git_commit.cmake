# Writes OUTPUT, a header defining CONVBENCH_GIT_COMMIT: the checkout's commit (12 hex digits),
# with "-dirty" when tracked files differ from it, or "unknown" outside a git checkout. Runs
# at every build (bench/CMakeLists.txt), so that an incremental build after a commit or an
# edit reports the source it was built from; the header is rewritten only when the value
# changes, so an unchanged commit recompiles nothing.
#   cmake -DSOURCE_DIR=<checkout> -DOUTPUT=<header> -P git_commit.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE _result)
if(NOT _result EQUAL 0 OR _commit STREQUAL "")
  set(_commit "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD --
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  ERROR_QUIET RESULT_VARIABLE _dirty)
  if(NOT _dirty EQUAL 0)
    string(APPEND _commit "-dirty")
  endif()
endif()
set(_text "#pragma once\n// Generated at build time by bench/git_commit.cmake.\n#define CONVBENCH_GIT_COMMIT \"${_commit}\"\n")
set(_existing "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} _existing)
endif()
if(NOT _existing STREQUAL _text)
  file(WRITE ${OUTPUT} "${_text}")
endif()
