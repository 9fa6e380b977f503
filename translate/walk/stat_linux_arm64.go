package walk

import "syscall"

// sysFstatat is the fstatat system call os.Stat makes.
const sysFstatat = syscall.SYS_FSTATAT
