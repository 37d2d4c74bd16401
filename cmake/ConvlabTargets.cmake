# Helpers for the library's targets (lib/CMakeLists.txt and the backends' folders).

# convlab_folder_root(OUT FOLDER): an include root that exposes exactly one source folder
# under its own name. With it, `#include "cuda/common/check.hpp"` resolves and
# `#include "lib/src/anything.hpp"` does not, so the compiler itself refuses an include that
# crosses into a folder the target has no business in.
function(convlab_folder_root out folder)
  get_filename_component(name ${folder} NAME)
  set(root ${PROJECT_BINARY_DIR}/include-roots/${name})
  file(MAKE_DIRECTORY ${root})
  if(NOT IS_SYMLINK ${root}/${name})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${name} SYMBOLIC)
  endif()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

# convlab_describe_target(TARGET FOLDERS <dirs...> PUBLIC <files or dirs...>): records which
# source folders a target owns and which of its headers other targets may include, for the
# include checker (scripts/check_targets.py, run as the ctest architecture.includes).
function(convlab_describe_target target)
  cmake_parse_arguments(arg "" "" "FOLDERS;PUBLIC" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY CONVLAB_LIBRARY_TARGETS ${target})
  set_property(TARGET ${target} PROPERTY CONVLAB_FOLDERS ${arg_FOLDERS})
  set_property(TARGET ${target} PROPERTY CONVLAB_PUBLIC ${arg_PUBLIC})
endfunction()

# convlab_write_target_map(FILE): the map of every described target (its folders, its public
# headers and the described targets it links) as JSON, for the include checker.
function(convlab_write_target_map file)
  get_property(targets GLOBAL PROPERTY CONVLAB_LIBRARY_TARGETS)
  set(json "{\"targets\": [")
  set(sep "")
  foreach(t ${targets})
    get_target_property(folders ${t} CONVLAB_FOLDERS)
    get_target_property(public ${t} CONVLAB_PUBLIC)
    get_target_property(type ${t} TYPE)
    set(links "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${t} LINK_LIBRARIES)
    endif()
    get_target_property(ilinks ${t} INTERFACE_LINK_LIBRARIES)
    set(deps "")
    foreach(l ${links} ${ilinks})
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" l "${l}")
      if(TARGET ${l})
        get_target_property(aliased ${l} ALIASED_TARGET)
        if(aliased)
          set(l ${aliased})
        endif()
        if(l IN_LIST targets AND NOT l IN_LIST deps)
          list(APPEND deps ${l})
        endif()
      endif()
    endforeach()
    foreach(var folders public deps)
      if(NOT ${var})
        set(${var} "")
      endif()
      set(${var}_json "")
      set(s "")
      foreach(item ${${var}})
        string(APPEND ${var}_json "${s}\"${item}\"")
        set(s ", ")
      endforeach()
    endforeach()
    string(APPEND json "${sep}\n  {\"name\": \"${t}\", \"folders\": [${folders_json}], "
                       "\"public\": [${public_json}], \"deps\": [${deps_json}]}")
    set(sep ",")
  endforeach()
  string(APPEND json "\n]}\n")
  file(WRITE ${file} "${json}")
endfunction()
