"""The module name Meridian's Python binding had before the `meridian`
package: `import meridian_probe as mp` keeps working, with the same
functions (and the package's others)."""

from meridian import *  # noqa: F401,F403
from meridian import __all__, __version__  # noqa: F401
