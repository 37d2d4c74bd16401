# convlab_option(NAME DOC): a tri-state AUTO/ON/OFF cache option.
#   AUTO: use the dependency when it is found, else say in one line what was missing.
#   ON:   the dependency is required; missing is a configure error.
#   OFF:  do not look for it.
function(convlab_option name doc)
  set(${name} AUTO CACHE STRING "${doc} (AUTO, ON or OFF)")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${name}}" value)
  if(value MATCHES "^(1|YES|TRUE|Y)$")
    set(value ON)
  elseif(value MATCHES "^(0|NO|FALSE|N)$")
    set(value OFF)
  endif()
  if(NOT value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${name}=${${name}}: expected AUTO, ON or OFF")
  endif()
  set(${name}_MODE ${value} PARENT_SCOPE)
endfunction()

# convlab_resolve(NAME FOUND WHAT): turns the option's mode and whether its dependency was
# found into CONVLAB_HAVE_<suffix>; AUTO without the dependency prints why it is off.
function(convlab_resolve name found what)
  string(REPLACE "CONVLAB_WITH_" "CONVLAB_HAVE_" have ${name})
  if(${name}_MODE STREQUAL "OFF")
    message(STATUS "convlab: ${name}=OFF: ${what} not used")
    set(${have} OFF PARENT_SCOPE)
  elseif(found)
    set(${have} ON PARENT_SCOPE)
  elseif(${name}_MODE STREQUAL "ON")
    message(FATAL_ERROR "convlab: ${name}=ON but ${what} was not found")
  else()
    message(STATUS "convlab: ${what} not found: ${name} is off")
    set(${have} OFF PARENT_SCOPE)
  endif()
endfunction()
