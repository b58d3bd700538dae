# The Debian package (docs/packaging.md): install() rules for a /usr prefix and CPack's DEB
# generator. `make deb` builds build/package/benchlab_VERSION_amd64.deb; `cmake --install build
# --prefix /usr` installs the same files. Included by CMakeLists.txt outside sanitizer and fuzz
# builds.
include(GNUInstallDirs)

# --- what the package holds --------------------------------------------------------------------
install(TARGETS benchlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The bundled example target, which the example server agent's catalogue starts: lib/benchlab,
# not CMAKE_INSTALL_LIBDIR, since it is a program and has no multiarch directory.
install(TARGETS hello-server RUNTIME DESTINATION lib/benchlab)
if(BENCHLAB_WEB)
  # bin/../share/benchlab/web: where `benchlab coordinator` looks when the build tree's web/ is
  # not beside it (cli/web_root.h).
  install(DIRECTORY ${BENCHLAB_WEB_OUT}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/benchlab/web)
endif()
# The example agent's campaign_dir: the example campaign and the nginx template. The campaign is
# installed as a copy whose hello-server is the packaged one: examples/hello.toml, which `make
# run` runs, names the build tree's. Written at configure time, again whenever the file changes.
set(benchlab_hello_build "\"{campaign_dir}/../build/bin/hello-server\"")
set(benchlab_hello_installed "\"/usr/lib/benchlab/hello-server\"")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/hello.toml)
file(READ ${CMAKE_SOURCE_DIR}/examples/hello.toml benchlab_hello)
string(FIND "${benchlab_hello}" "${benchlab_hello_build}" benchlab_hello_at)
if(benchlab_hello_at EQUAL -1)
  message(FATAL_ERROR "examples/hello.toml: no command naming ${benchlab_hello_build}, which the "
    "package's copy replaces with ${benchlab_hello_installed} (cmake/Package.cmake)")
endif()
string(REPLACE "${benchlab_hello_build}" "${benchlab_hello_installed}" benchlab_hello
  "${benchlab_hello}")
string(PREPEND benchlab_hello
  "# Installed by the benchlab package from its source's examples/hello.toml, with the packaged\n"
  "# hello-server. Run it with: benchlab run /usr/share/benchlab/examples/hello.toml --db hello.db\n")
file(WRITE ${CMAKE_BINARY_DIR}/packaging/hello.toml.new "${benchlab_hello}")
configure_file(${CMAKE_BINARY_DIR}/packaging/hello.toml.new ${CMAKE_BINARY_DIR}/packaging/hello.toml
  COPYONLY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/hello.toml examples/nginx.conf.in
  DESTINATION ${CMAKE_INSTALL_DATADIR}/benchlab/examples)

# The Grafana dashboard over the metrics (docs/metrics.md), for Dashboards > Import.
install(FILES deploy/grafana/benchlab.json DESTINATION ${CMAKE_INSTALL_DATADIR}/benchlab/grafana)

# Units and configuration go to absolute places whatever the prefix: systemd's unit directory
# on Debian 12 (pkg-config --variable=systemdsystemunitdir systemd) and /etc.
install(FILES deploy/systemd/benchlab-coordinator.service deploy/systemd/benchlab-agent@.service
  DESTINATION /lib/systemd/system)
install(FILES deploy/etc/agent-server-1.toml deploy/etc/agent-load-1.toml
  DESTINATION /etc/benchlab)
install(FILES deploy/etc/benchlab-coordinator.default
  DESTINATION /etc/default RENAME benchlab-coordinator)

# The manual page, changelog and copyright, which every Debian package carries; gzip -9n makes
# the compressed files the same on every build (no name or time stamp inside).
find_program(BENCHLAB_GZIP gzip REQUIRED)
set(benchlab_pkg_gen ${CMAKE_BINARY_DIR}/packaging)
configure_file(packaging/deb/benchlab.1.in ${benchlab_pkg_gen}/benchlab.1 @ONLY)
set(benchlab_pkg_outputs)
foreach(src ${benchlab_pkg_gen}/benchlab.1 ${CMAKE_SOURCE_DIR}/packaging/deb/changelog)
  get_filename_component(name ${src} NAME)
  add_custom_command(OUTPUT ${benchlab_pkg_gen}/${name}.gz
    COMMAND ${BENCHLAB_GZIP} -9n -c ${src} > ${benchlab_pkg_gen}/${name}.gz
    DEPENDS ${src}
    COMMENT "package: ${name}.gz")
  list(APPEND benchlab_pkg_outputs ${benchlab_pkg_gen}/${name}.gz)
endforeach()
# Shell completion, written by the binary from its own definitions (cli/completion.h), where
# bash-completion, zsh and fish look for a package's scripts.
foreach(shell bash zsh fish)
  add_custom_command(OUTPUT ${benchlab_pkg_gen}/completion.${shell}
    COMMAND $<TARGET_FILE:benchlab> completion ${shell} > ${benchlab_pkg_gen}/completion.${shell}
    DEPENDS benchlab
    COMMENT "package: ${shell} completion")
  list(APPEND benchlab_pkg_outputs ${benchlab_pkg_gen}/completion.${shell})
endforeach()
# A manual page per subcommand, written by the binary from its own definitions (cli/manpage.h)
# with the date of benchlab(1): benchlab-NAME.1.gz beside it. The directory is made anew, so a
# subcommand removed leaves no page behind.
file(STRINGS packaging/deb/benchlab.1.in benchlab_th REGEX "^\\.TH ")
if(NOT benchlab_th MATCHES "\"([0-9]+-[0-9]+-[0-9]+)\"")
  message(FATAL_ERROR "packaging/deb/benchlab.1.in: no date (\"YYYY-MM-DD\") in its .TH line")
endif()
set(benchlab_man_date ${CMAKE_MATCH_1})
add_custom_command(OUTPUT ${benchlab_pkg_gen}/man1.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${benchlab_pkg_gen}/man1
  COMMAND $<TARGET_FILE:benchlab> man --output-dir ${benchlab_pkg_gen}/man1 --date ${benchlab_man_date}
  COMMAND sh -c "${BENCHLAB_GZIP} -9nf \"$0\"/*.1" ${benchlab_pkg_gen}/man1
  COMMAND ${CMAKE_COMMAND} -E touch ${benchlab_pkg_gen}/man1.stamp
  DEPENDS benchlab
  COMMENT "package: a manual page per subcommand"
  VERBATIM)
list(APPEND benchlab_pkg_outputs ${benchlab_pkg_gen}/man1.stamp)
add_custom_target(benchlab_package_files ALL DEPENDS ${benchlab_pkg_outputs})
install(FILES ${benchlab_pkg_gen}/completion.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME benchlab)
install(FILES ${benchlab_pkg_gen}/completion.zsh
  DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions RENAME _benchlab)
install(FILES ${benchlab_pkg_gen}/completion.fish
  DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d RENAME benchlab.fish)
install(FILES ${benchlab_pkg_gen}/benchlab.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(DIRECTORY ${benchlab_pkg_gen}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  FILES_MATCHING PATTERN "benchlab-*.1.gz")
install(FILES packaging/deb/copyright ${benchlab_pkg_gen}/changelog.gz deploy/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB benchlab_docs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${benchlab_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# --- the package's control data ------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME benchlab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "benchlab maintainers <maintainers@users.noreply.a-seed-aa826c53.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed benchmark lab for HTTP servers")
# The extended description (CPack puts the summary above it and indents it for the control file).
set(CPACK_PACKAGE_DESCRIPTION "A coordinator schedules campaigns of measurement windows over gRPC to agents:
server agents start the HTTP servers under test on their own CPUs, load agents
drive them, and every window is judged by gates (foreign CPU, throttling,
self-test) and stored in SQLite. A web dashboard shows campaigns and reports.

This package holds the benchlab binary, systemd units for the coordinator and
for agents (benchlab-agent@NAME), example agent configurations in /etc/benchlab
and the bundled hello-server example target.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # benchlab_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Library dependencies are Debian's package names, computed by dpkg-shlibdeps from the binary
# and appended to the fixed ones: adduser makes the system user in postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "nginx-light | nginx, wrk, nghttp2-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, sqlite3")
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
  OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# Units and /etc files have absolute destinations on purpose (above).
set(CPACK_WARN_ON_ABSOLUTE_INSTALL_DESTINATION OFF)
# CPack marks no file as a conffile: packaging/deb/conffiles lists those under /etc.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_SOURCE_DIR}/packaging/deb/conffiles ${CMAKE_SOURCE_DIR}/packaging/deb/postinst
  ${CMAKE_SOURCE_DIR}/packaging/deb/prerm ${CMAKE_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)  # 0755 scripts, 0644 the rest
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
