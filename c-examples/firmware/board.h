/* What the firmware example needs from its board (startup.c). */
#ifndef WEIR_FIRMWARE_BOARD_H
#define WEIR_FIRMWARE_BOARD_H

#include <stdint.h>

/* Prints a NUL-terminated string through semihosting. */
void board_print(const char *text);

/* Ends the program with `code` as QEMU's exit status. */
void board_exit(uint32_t code) __attribute__((noreturn));

/* Starts the SysTick timer interrupting every `cycles` processor cycles,
 * calling board_tick() each time, and enables interrupts. */
void board_ticks_start(uint32_t cycles);

/* Stops the SysTick timer and disables interrupts again. */
void board_ticks_stop(void);

/* The SysTick handler; the program defines it. */
void board_tick(void);

#endif
