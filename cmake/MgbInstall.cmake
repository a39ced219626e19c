# `cmake --install` and the Debian package (CPack): the tools in bin/, libmgb, the libraries a
# rewritten program links and libmgb-guard.so in lib/mgb/ (a private directory, the same on
# every distribution: `mgb run` looks for the guard at bin/../lib/mgb), mgb.h in include/mgb/, and in
# share/mgb/ the link line mgb-nvcc/mgb-cc/mgb-c++ use. Installed tools find everything relative to
# their own place (share/mgb/installed marks the layout), never the build tree; the files that name
# paths (the link line, mgb-config) are written at install time for the prefix installed to.
include(GNUInstallDirs)

set(mgb_installed_tools mgbd mgb mgb-batch)
if(TARGET mgb-rewrite)
  list(APPEND mgb_installed_tools mgb-rewrite)
endif()
install(TARGETS ${mgb_installed_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS mgb_guard LIBRARY DESTINATION lib/mgb)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/mgb)

if(TARGET mgb_runtime)
  install(TARGETS ${MGB_LINK_ARCHIVES} ARCHIVE DESTINATION lib/mgb)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/mgb
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  # The link line (runtime/CMakeLists.txt writes it with @MGB_LIBDIR@ for the archives' place).
  install(CODE "
    set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
    set(libdir \"\${prefix}/lib/mgb\")
    file(READ \"${CMAKE_BINARY_DIR}/install/mgb-link-flags.txt.in\" link)
    string(REPLACE \"@MGB_LIBDIR@\" \"\${libdir}\" link \"\${link}\")
    file(WRITE \"\$ENV{DESTDIR}\${prefix}/${CMAKE_INSTALL_DATADIR}/mgb/mgb-link-flags.txt\" \"\${link}\")
    file(WRITE \"\$ENV{DESTDIR}\${prefix}/${CMAKE_INSTALL_DATADIR}/mgb/installed\"
         \"mgb's installed layout: tools find their files relative to bin/\\n\")
    # mgb-config for the installed files: the build's script with the build's paths replaced.
    file(READ \"${CMAKE_BINARY_DIR}/mgb-config\" config)
    string(REGEX REPLACE \"cflags='[^']*'\" \"cflags='-I\${prefix}/${CMAKE_INSTALL_INCLUDEDIR} -I${MGB_INSTALL_CUDA_INCLUDE}'\" config \"\${config}\")
    string(STRIP \"\${link}\" link)
    string(REGEX REPLACE \"libs='[^']*'\" \"libs='\${link}'\" config \"\${config}\")
    file(WRITE \"\$ENV{DESTDIR}\${prefix}/${CMAKE_INSTALL_BINDIR}/mgb-config\" \"\${config}\")
    file(CHMOD \"\$ENV{DESTDIR}\${prefix}/${CMAKE_INSTALL_BINDIR}/mgb-config\"
         PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  ")
endif()
if(TARGET mgb-rewrite)
  # find_package(mgb) then mgb_rewrite(target), from an install.
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/package/mgbConfig.cmake
                ${PROJECT_SOURCE_DIR}/cmake/MgbRewrite.cmake
          DESTINATION lib/cmake/mgb)
  foreach(driver mgb-nvcc mgb-cc mgb-c++)
    install(PROGRAMS ${PROJECT_BINARY_DIR}/rewriter/${driver} DESTINATION ${CMAKE_INSTALL_BINDIR})
  endforeach()
  # The shared part without the build tree's paths (rewriter/CMakeLists.txt).
  install(PROGRAMS ${PROJECT_BINARY_DIR}/rewriter/install/mgb-driver-common.sh
          DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# systemd: mgbd.socket (socket activation, group mgb) and mgbd.service (Type=notify).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/mgbd.socket
              ${PROJECT_SOURCE_DIR}/packaging/systemd/mgbd.service
        DESTINATION lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/mgb.sysusers.conf
        DESTINATION lib/sysusers.d RENAME mgb.conf)

install(FILES ${PROJECT_SOURCE_DIR}/packaging/grafana/mgb-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mgb/grafana)

# The Debian package: `cpack -G DEB` in the build directory.
set(CPACK_PACKAGE_NAME mgb)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "mgb developers <mgb@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU sharing under compiler guidance: mgbd, mgb, mgb-nvcc, libmgb and the allocation guard")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
# What the tools load, and what programs built with mgb-nvcc link (static libmgb, gRPC's archives'
# shared libraries). The CUDA toolkit comes from NVIDIA, not Debian: not a dependency.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libgrpc++-dev, libprotobuf-dev, libabsl-dev, libclang-cpp19, libllvm19")
include(CPack)
