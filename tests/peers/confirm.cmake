# tests/peers/confirm.cmake: dlpv_confirm_tests(FILES PYTHON ENV): one CTest test per distinct
# confirmed_by command of the baseline FILES (every finding about a real library names the
# script that confirms it outside the validator, peers/confirm/), run by PYTHON in peers/confirm
# with ENV. A command already added (by any call) is not added again.
# The scripts about a library whose import is slow (DLPV_CONFIRM_FORKED: its first argument names
# it) run in children forked from one interpreter that imported it once
# (peers/confirm/_forkserver.py), started and stopped by a CTest fixture per PYTHON and library;
# with no server (a test run alone without its fixture) a script runs as before.
set(DLPV_CONFIRM_FORKED tensorflow paddle torch jax tvm_ffi mlx)

# The fixture of PYTHON's fork server for `lib`: its name in *fixture (added once).
function(dlpv_confirm_server python lib env fixture socket)
  string(MD5 key "${CMAKE_BINARY_DIR};${python};${lib}")
  string(SUBSTRING "${key}" 0 12 key)
  set(sock /tmp/dlpv-confirm-${key}.sock)
  set(name confirm_server_${lib}_${key})
  set(${fixture} ${name} PARENT_SCOPE)
  set(${socket} ${sock} PARENT_SCOPE)
  if(TEST peers.confirm.server.${lib}.${key})
    return()
  endif()
  add_test(NAME peers.confirm.server.${lib}.${key}
    COMMAND ${python} ${PROJECT_SOURCE_DIR}/peers/confirm/_forkserver.py serve ${sock} ${lib}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/peers/confirm)
  set_tests_properties(peers.confirm.server.${lib}.${key} PROPERTIES ENVIRONMENT "${env}" FIXTURES_SETUP ${name}
                       LABELS "peers;pinned;confirm")
  add_test(NAME peers.confirm.server_stop.${lib}.${key}
    COMMAND ${python} ${PROJECT_SOURCE_DIR}/peers/confirm/_forkserver.py stop ${sock})
  set_tests_properties(peers.confirm.server_stop.${lib}.${key} PROPERTIES FIXTURES_CLEANUP ${name}
                       LABELS "peers;pinned;confirm")
endfunction()

function(dlpv_confirm_tests files python env)
  get_property(seen GLOBAL PROPERTY DLPV_CONFIRM_SEEN)
  foreach(f IN LISTS files)
    file(READ ${f} doc)
    string(JSON n LENGTH "${doc}" entries)
    if(n EQUAL 0)
      continue()
    endif()
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON entry_case GET "${doc}" entries ${i} case)
      string(JSON command ERROR_VARIABLE no_command GET "${doc}" entries ${i} confirmed_by)
      if(no_command)
        message(FATAL_ERROR "${f}: entry ${entry_case} has no confirmed_by: every finding about a real library names the script that confirms it")
      endif()
      if(command IN_LIST seen)
        continue()
      endif()
      list(APPEND seen "${command}")
      separate_arguments(argv UNIX_COMMAND "${command}")
      list(POP_FRONT argv script)
      string(REGEX REPLACE "^peers/confirm/|\\.py$" "" stem "${script}")
      string(REGEX REPLACE "-([0-9])" "m\\1" tag "${stem} ${argv}")  # stream -1 is not stream 1
      string(REGEX REPLACE "[^A-Za-z0-9_.]+" "_" tag "${tag}")
      string(REGEX REPLACE "_+$" "" tag "${tag}")
      set(first "")
      if(argv)
        list(GET argv 0 first)
      endif()
      if(first IN_LIST DLPV_CONFIRM_FORKED)
        dlpv_confirm_server(${python} ${first} "${env}" fixture sock)
        add_test(NAME peers.confirm.${tag}
          COMMAND ${python} ${PROJECT_SOURCE_DIR}/peers/confirm/_forkserver.py run ${sock}
                  ${PROJECT_SOURCE_DIR}/${script} ${argv}
          WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/peers/confirm)
        set_tests_properties(peers.confirm.${tag} PROPERTIES FIXTURES_REQUIRED ${fixture})
      else()
        add_test(NAME peers.confirm.${tag}
          COMMAND ${python} ${PROJECT_SOURCE_DIR}/${script} ${argv}
          WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/peers/confirm)
      endif()
      set_tests_properties(peers.confirm.${tag} PROPERTIES ENVIRONMENT "${env}" LABELS "peers;pinned;confirm")
    endforeach()
  endforeach()
  set_property(GLOBAL PROPERTY DLPV_CONFIRM_SEEN "${seen}")
endfunction()
