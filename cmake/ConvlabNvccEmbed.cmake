# convlab_embed_nvcc(TARGET <target> SOURCE <file.cu> KIND fatbin|ptx ARCH <nn>
#                    SYMBOL <name> NAMESPACE <ns> [INCLUDES <dirs or generator expressions>...])
# compiles SOURCE with nvcc apart from any target, to LTO-IR in a fatbin (KIND fatbin: what
# cuFFT's JIT callbacks take) or to PTX (KIND ptx), for compute_ARCH, and compiles its bytes
# into TARGET as NAMESPACE::SYMBOL and NAMESPACE::SYMBOL_size (ConvlabEmbedBytes.cmake).
# The artifact's header dependencies come from nvcc's own dependency file.
set(_convlab_embed_script ${CMAKE_CURRENT_LIST_DIR}/ConvlabEmbedBytes.cmake)

function(convlab_embed_nvcc)
  cmake_parse_arguments(arg "" "TARGET;SOURCE;KIND;ARCH;SYMBOL;NAMESPACE" "INCLUDES" ${ARGN})
  get_filename_component(name ${arg_SOURCE} NAME_WE)
  set(artifact ${CMAKE_CURRENT_BINARY_DIR}/${name}.${arg_KIND})
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${name}_${arg_KIND}.cpp)
  if(arg_KIND STREQUAL "fatbin")
    set(mode -gencode=arch=compute_${arg_ARCH},code=lto_${arg_ARCH} -dc -fatbin)
  elseif(arg_KIND STREQUAL "ptx")
    set(mode -rdc=true -ptx -arch=compute_${arg_ARCH})
  else()
    message(FATAL_ERROR "convlab_embed_nvcc: KIND ${arg_KIND} is neither fatbin nor ptx")
  endif()
  set(ccbin "")
  if(CMAKE_CUDA_HOST_COMPILER)
    set(ccbin -ccbin ${CMAKE_CUDA_HOST_COMPILER})
  endif()
  # Each item may be a list (a generator expression of include directories): -I before each
  # of its directories, the separators written as $<SEMICOLON> so that nothing splits the
  # expression before it is evaluated.
  set(includes "")
  foreach(item IN LISTS arg_INCLUDES)
    list(APPEND includes "-I$<JOIN:${item},$<SEMICOLON>-I>")
  endforeach()
  add_custom_command(
    OUTPUT ${artifact}
    COMMAND ${CMAKE_CUDA_COMPILER} ${ccbin} -std=c++17 --expt-relaxed-constexpr ${includes}
            ${mode} ${arg_SOURCE} -o ${artifact} -MD -MF ${artifact}.d
    DEPENDS ${arg_SOURCE}
    DEPFILE ${artifact}.d
    COMMENT "nvcc ${name}.cu: ${arg_KIND} for compute_${arg_ARCH}"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_command(
    OUTPUT ${source}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${artifact} -DOUTPUT=${source} -DSYMBOL=${arg_SYMBOL}
            -DNAMESPACE=${arg_NAMESPACE} -P ${_convlab_embed_script}
    DEPENDS ${artifact} ${_convlab_embed_script}
    VERBATIM)
  target_sources(${arg_TARGET} PRIVATE ${source})
endfunction()
