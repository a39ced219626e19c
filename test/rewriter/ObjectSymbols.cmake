# Symbol checks on a built project's objects and programs (included by the -P scripts of the
# driver tests; OUT and NM come from their command line).
# symbols(FILE RESULT): `nm -C OUT/FILE`.
function(symbols file result)
  execute_process(COMMAND ${NM} -C ${OUT}/${file} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm ${file} failed")
  endif()
  set(${result} "${syms}" PARENT_SCOPE)
endfunction()

# expect_symbols("FILE;REGEX" ...): each FILE's symbols match its REGEX (rewritten, libmgb linked).
# (CMake flattens the pairs into one list: FILE, REGEX, FILE, REGEX...)
function(expect_symbols)
  set(items ${ARGV})
  list(LENGTH items n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET items ${i} file)
    list(GET items ${j} pattern)
    symbols(${file} syms)
    if(NOT syms MATCHES "${pattern}")
      message(FATAL_ERROR "${file} does not match '${pattern}': not rewritten or not linked with libmgb")
    endif()
  endforeach()
endfunction()
