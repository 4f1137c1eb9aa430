# llmbench_expose(TARGET DIR): TARGET's headers are included as "DIR/name.h".
# The layering (kernels <- engine <- tools, and each tools/ library's declared dependencies) is
# enforced by include scope: TARGET's public include directory is a folder in the build tree
# that holds nothing but a link named DIR to the source folder. A file therefore sees a header
# only when its target links, directly or through a PUBLIC dependency, the library that owns
# it; an include that runs the wrong way ("engine/..." from kernels/) fails to compile.
# tests/layering/check_includes.cmake checks the same graph by scanning every #include
# (it also catches relative "../" paths, which include scope cannot see).
function(llmbench_expose target dir)
  string(REPLACE "/" "_" slot ${dir})
  set(root ${PROJECT_BINARY_DIR}/include_roots/${slot})
  get_filename_component(parent ${root}/${dir} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT EXISTS ${root}/${dir})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${dir} ${root}/${dir} SYMBOLIC)
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()
