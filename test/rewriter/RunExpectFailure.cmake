# Runs mgb-rewrite on input that must be refused: non-zero exit, MESSAGE in stderr, no output.
# Variables: REWRITE OUT ARGS ('|'-list) MESSAGE
string(REPLACE "|" ";" ARGS "${ARGS}")
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${REWRITE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "mgb-rewrite ${ARGS} succeeded; expected a failure")
endif()
if(NOT err MATCHES "${MESSAGE}")
  message(FATAL_ERROR "stderr lacks '${MESSAGE}':\n${err}")
endif()
if(EXISTS ${OUT})
  message(FATAL_ERROR "mgb-rewrite wrote ${OUT} although it failed")
endif()
