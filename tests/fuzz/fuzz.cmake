# One fuzz target per parser. Each builds as a replay executable with the normal compiler (CTest
# `fuzz_NAME` replays tests/fuzz/corpus/NAME, so every run checks every seed and every crash
# that was found), and with -DGPUJIT_FUZZ=ON and clang also as a libFuzzer executable.
set(GPUJIT_FUZZ_TARGETS trace nvrtc_trace trace_load ncu_csv arg_spec launch_plan cache_records cache_entry
  bundle import image includes project_manifest wire ptx profile params)
set(GPUJIT_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)

function(gpujit_fuzz_target exe name main)
  set(srcs ${GPUJIT_FUZZ_DIR}/fuzz_${name}.c ${main})
  if(name STREQUAL "launch_plan")
    list(APPEND srcs ${PROJECT_SOURCE_DIR}/src/cli/run_plan.c)
  endif()
  add_executable(${exe} ${srcs})
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/src ${GPUJIT_FUZZ_DIR} ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_definitions(${exe} PRIVATE _GNU_SOURCE
    GPUJIT_FUZZ_IMAGE="${GPUJIT_FUZZ_DIR}/corpus/image/saxpy.cubin")
  target_link_libraries(${exe} PRIVATE gpujit_static PkgConfig::CJSON PkgConfig::XXHASH Threads::Threads)
endfunction()

foreach(name ${GPUJIT_FUZZ_TARGETS})
  gpujit_fuzz_target(fuzz_replay_${name} ${name} ${GPUJIT_FUZZ_DIR}/replay.c)
  add_test(NAME fuzz_${name} COMMAND fuzz_replay_${name} ${GPUJIT_FUZZ_DIR}/corpus/${name})
  set_tests_properties(fuzz_${name} PROPERTIES LABELS "cpu;fuzz" TIMEOUT 600)
  if(GPUJIT_FUZZ)
    gpujit_fuzz_target(fuzz_${name} ${name} "")
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()

# Seeds that only the library can make (make_seeds.sh runs it; not a test).
add_executable(fuzz_make_seeds ${GPUJIT_FUZZ_DIR}/make_seeds.c)
target_include_directories(fuzz_make_seeds PRIVATE ${PROJECT_SOURCE_DIR}/src ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(fuzz_make_seeds PRIVATE _GNU_SOURCE)
target_link_libraries(fuzz_make_seeds PRIVATE gpujit_static PkgConfig::CJSON PkgConfig::XXHASH Threads::Threads)
