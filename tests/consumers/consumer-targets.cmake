# SPDX-License-Identifier: MIT
# The consumer programs a downstream project builds against liblatch's
# CMake targets (latch::latch, latch::latch_static), however it got them:
# find_package() of an install (find-package/) or liblatch's own source
# in its build (embed/).  LATCH_CONSUMER_SOURCE_DIR is tests/consumers.
add_compile_options(-Wall -Wextra -Wpedantic -Werror)
add_executable(consumer-shared ${LATCH_CONSUMER_SOURCE_DIR}/consumer.c)
target_link_libraries(consumer-shared PRIVATE latch::latch ${CMAKE_DL_LIBS})
add_executable(consumer-static ${LATCH_CONSUMER_SOURCE_DIR}/consumer.c)
target_link_libraries(consumer-static PRIVATE latch::latch_static ${CMAKE_DL_LIBS})
add_executable(consumer-cxx ${LATCH_CONSUMER_SOURCE_DIR}/consumer.cpp)
target_link_libraries(consumer-cxx PRIVATE latch::latch ${CMAKE_DL_LIBS})
