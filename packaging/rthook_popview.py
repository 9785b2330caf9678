"""Runtime hook of the bundle: numba's compiled-kernel cache goes to the user's cache
directory (the bundle folder may be read-only)."""
import os

import platformdirs

os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(platformdirs.user_cache_dir("popview"), "numba"))
