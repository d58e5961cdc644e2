# tests/peers/confirm.cmake: dlpv_confirm_tests(FILES PYTHON ENV): one CTest test per distinct
# confirmed_by command of the baseline FILES (every finding about a real library names the
# script that confirms it outside the validator, peers/confirm/), run by PYTHON in peers/confirm
# with ENV. A command already added (by any call) is not added again.

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
      add_test(NAME peers.confirm.${tag}
        COMMAND ${python} ${PROJECT_SOURCE_DIR}/${script} ${argv}
        WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}/peers/confirm)
      set_tests_properties(peers.confirm.${tag} PROPERTIES ENVIRONMENT "${env}" LABELS "peers;pinned;confirm")
    endforeach()
  endforeach()
  set_property(GLOBAL PROPERTY DLPV_CONFIRM_SEEN "${seen}")
endfunction()
