# Driver of the ctest model_matches_numpy_reference (cmake -P, so it needs no shell):
#   1. llmbench export-weights --model tiny --seed SEED -o WORK_DIR
#   2. dump_logits --model tiny --seed SEED --out WORK_DIR/llmbench.json
#   3. PYTHON llama_ref.py --weights WORK_DIR --llmbench-out WORK_DIR/llmbench.json
# Variables (-D...): LLMBENCH, DUMP_LOGITS, PYTHON (empty: none with numpy was found), TRIED
# (the interpreters tried), SCRIPT, WORK_DIR, MODEL, SEED. Any failing step fails the test.
if(NOT PYTHON)
  message(FATAL_ERROR "no Python interpreter with numpy found (tried: ${TRIED}); "
                      "install Debian's python3-numpy (apt-get install python3-numpy)")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")  # no stale weights or logits from an earlier run
get_filename_component(parent "${WORK_DIR}" DIRECTORY)
file(MAKE_DIRECTORY "${parent}")     # export-weights creates WORK_DIR itself, not its parents

function(step)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "$ ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (exit status ${rc}): ${shown}")
  endif()
endfunction()

step("${LLMBENCH}" export-weights --model ${MODEL} --seed ${SEED} -o "${WORK_DIR}")
step("${DUMP_LOGITS}" --model ${MODEL} --seed ${SEED} --out "${WORK_DIR}/llmbench.json")
step("${PYTHON}" "${SCRIPT}" --weights "${WORK_DIR}" --llmbench-out "${WORK_DIR}/llmbench.json")
