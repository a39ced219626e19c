# find_package(mgb): mgb as installed (cmake --install, the .deb). Gives mgb_rewrite(<target>)
# (cmake/MgbRewrite.cmake), the imported mgb-rewrite tool and libmgb as mgb::runtime with what it
# links, all found relative to this file.
#   find_package(mgb REQUIRED)
#   add_executable(app main.cu)
#   mgb_rewrite(app)
get_filename_component(_mgb_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET mgb-rewrite)
  add_executable(mgb-rewrite IMPORTED)
  set_target_properties(mgb-rewrite PROPERTIES IMPORTED_LOCATION "${_mgb_prefix}/bin/mgb-rewrite")
endif()
if(NOT TARGET mgb::runtime)
  # The installed link line: libmgb first, then the archives and system libraries it needs.
  file(READ "${_mgb_prefix}/share/mgb/mgb-link-flags.txt" _mgb_link)
  string(STRIP "${_mgb_link}" _mgb_link)
  separate_arguments(_mgb_link UNIX_COMMAND "${_mgb_link}")
  list(POP_FRONT _mgb_link _mgb_libmgb)
  add_library(mgb::runtime STATIC IMPORTED)
  set_target_properties(mgb::runtime PROPERTIES
    IMPORTED_LOCATION "${_mgb_libmgb}"
    INTERFACE_INCLUDE_DIRECTORIES "${_mgb_prefix}/include"
    INTERFACE_LINK_LIBRARIES "${_mgb_link}")
endif()
set(MGB_RUNTIME_TARGET mgb::runtime)
set(mgb_FOUND TRUE)
include("${CMAKE_CURRENT_LIST_DIR}/MgbRewrite.cmake")
