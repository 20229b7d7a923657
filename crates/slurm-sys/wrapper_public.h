/* What every build's bindings cover: the installed public headers, which a
 * SPANK plugin needs and nothing more (no source tree). */
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>
