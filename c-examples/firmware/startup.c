/* The few lines a bare Cortex-M program needs before main, and the two
 * semihosting calls the example prints and exits through. No C library:
 * the program links with -nostdlib (libgcc only, for the compiler's own
 * helpers).
 *
 * Reset: enable the FPU where there is one (the hard-float ABI passes
 * doubles in FPU registers, so the first weir call with a double would fault
 * otherwise), copy .data from its load address in flash to RAM, zero .bss,
 * run main and exit with its result. QEMU loads .data at its load address
 * only, so without the copy every initialised global reads as garbage. */
#include <stdint.h>

#include "board.h"

extern uint32_t __stack_top[];
extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];

int main(void);

/* Arm semihosting: the operation in r0, its argument in r1, `bkpt 0xAB`
 * traps to the debugger (here QEMU, -semihosting-config enable=on). */
static uint32_t semihost(uint32_t op, const void *arg) {
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void board_print(const char *text) {
    semihost(0x04 /* SYS_WRITE0 */, text);
}

/* SYS_EXIT_EXTENDED passes the whole exit code out; plain SYS_EXIT on
 * AArch32 carries only success or failure. */
void board_exit(uint32_t code) {
    const uint32_t block[2] = {0x20026 /* ADP_Stopped_ApplicationExit */, code};
    semihost(0x20 /* SYS_EXIT_EXTENDED */, block);
    for (;;) {
    }
}

void reset_handler(void) {
#if defined(__ARM_FP)
    /* CPACR: full access to coprocessors 10 and 11 (the FPU). */
    *(volatile uint32_t *)0xE000ED88 |= UINT32_C(0xF) << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    /* Volatile, so the compiler does not turn the loops into memcpy/memset
     * calls before .data exists. */
    volatile uint32_t *to = __data_start;
    const volatile uint32_t *from = __data_load;
    while (to < __data_end) {
        *to++ = *from++;
    }
    for (volatile uint32_t *z = __bss_start; z < __bss_end; z++) {
        *z = 0;
    }
    board_exit((uint32_t)main());
}

/* SysTick: control and status, reload value, current value. */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

void board_ticks_start(uint32_t cycles) {
    SYST_RVR = cycles - 1;
    SYST_CVR = 0;
    SYST_CSR = 7; /* enable, interrupt, processor clock */
    __asm__ volatile("cpsie i" ::: "memory");
}

void board_ticks_stop(void) {
    __asm__ volatile("cpsid i" ::: "memory");
    SYST_CSR = 0;
}

/* Any fault (a weir panic traps with `udf` and lands here too) ends the run
 * with a code no failure count reaches. */
static void fault_handler(void) {
    board_print("fault: the program trapped\n");
    board_exit(255);
}

/* The Cortex-M vector table: the initial stack pointer, then the handlers
 * for reset and the system exceptions; SysTick calls board_tick. */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top,
    reset_handler,
    fault_handler, /* NMI */
    fault_handler, /* HardFault */
    fault_handler, /* MemManage (M3 and later) */
    fault_handler, /* BusFault */
    fault_handler, /* UsageFault */
    0, 0, 0, 0,
    fault_handler, /* SVCall */
    fault_handler, /* DebugMonitor */
    0,
    fault_handler, /* PendSV */
    board_tick,    /* SysTick */
};
