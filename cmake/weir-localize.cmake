# Makes the clean static archive from the one cargo builds:
#   cmake -DIN=raw.a -DOUT=libweir.a -DWORK=dir -DLD=ld -DOBJCOPY=objcopy
#         -DNM=nm -DREADELF=readelf -DAR=ar -P weir-localize.cmake
#
# cargo's staticlib carries Rust's std, core and compiler_builtins as
# global symbols (__rust_alloc, rust_eh_personality, __udivti3, ...). Two
# such archives in one link (--whole-archive, a shared object, an nginx
# module beside another Rust module) collide. So:
#  1. partial link (ld -r) of what the weir_* functions need, from the
#     archive, into one relocatable object: the references between Rust's
#     objects are resolved inside it;
#  2. every global but weir_* made local (objcopy --keep-global-symbol);
#     COMDAT groups are renamed, or the linker would fold another
#     library's group of the same name into ours, now local, and leave its
#     references undefined; the embedded LLVM bitcode (.llvmbc, .llvmcmd),
#     which only rustc reads, is dropped;
#  3. that object archived alone.
# ELF and GNU binutils (or LLVM's equivalents) only.
cmake_minimum_required(VERSION 3.19)
foreach(var IN ITEMS IN OUT WORK LD OBJCOPY NM READELF AR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "weir-localize.cmake: ${var} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " line "${ARGN}")
    message(FATAL_ERROR "weir-localize.cmake: ${line}\n${out}${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${WORK}" "${out_dir}")
# The C API: every global weir_* function the archive defines.
run("${NM}" -g --defined-only "${IN}")
string(REGEX MATCHALL "[^\n]+ [TtDdBbRrWw] weir_[A-Za-z0-9_]+" lines "${run_output}")
set(keep)
foreach(line IN LISTS lines)
  string(REGEX REPLACE ".* (weir_[A-Za-z0-9_]+)$" "\\1" name "${line}")
  list(APPEND keep "${name}")
endforeach()
list(REMOVE_DUPLICATES keep)
list(LENGTH keep count)
if(count EQUAL 0)
  message(FATAL_ERROR "weir-localize.cmake: ${IN} defines no weir_* function")
endif()
set(undefined)
foreach(name IN LISTS keep)
  list(APPEND undefined -u "${name}")
endforeach()

set(linked "${WORK}/weir-linked.o")
set(clean "${WORK}/weir.o")
run("${LD}" -r ${undefined} "${IN}" -o "${linked}")

run("${READELF}" -g -W "${linked}")
string(REGEX MATCHALL "COMDAT group section \\[ *[0-9]+\\] `[^']*' \\[[^]]+\\]" groups "${run_output}")
set(renames)
foreach(group IN LISTS groups)
  string(REGEX REPLACE ".*\\[([^]]+)\\]$" "\\1" signature "${group}")
  if(NOT signature MATCHES "^weir_")
    list(APPEND renames "--redefine-sym=${signature}=weir.${signature}")
  endif()
endforeach()

run("${OBJCOPY}" --wildcard "--keep-global-symbol=weir_*"
  --remove-section=.llvmbc --remove-section=.llvmcmd ${renames}
  "${linked}" "${clean}")
file(REMOVE "${OUT}" "${linked}")
run("${AR}" rcs "${OUT}" "${clean}")
file(REMOVE "${clean}")
message(STATUS "weir-localize.cmake: ${OUT}: ${count} weir_* globals, every other symbol local")
