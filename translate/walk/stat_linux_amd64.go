package walk

import "syscall"

// sysFstatat is the fstatat system call os.Stat makes (newfstatat).
const sysFstatat = syscall.SYS_NEWFSTATAT
