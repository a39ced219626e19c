# mgb_warnings(TARGET): strict warnings for mgb's own code (never for generated or third-party code).
function(mgb_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${MGB_WERROR}>>:-Werror>)
endfunction()
