# mgb_warnings(TARGET): strict warnings for mgb's own code (never for generated or third-party code).
# -Wrestrict is off on GCC 12 only: at -O3 it flags libstdc++'s own `"g" + std::to_string(i)`
# (GCC bug 105329, fixed in GCC 13), which made Release builds fail on Debian 12.
function(mgb_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${MGB_WERROR}>>:-Werror>)
endfunction()
