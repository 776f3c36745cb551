"""The test suite, a regular package: a distribution that installs a top-level ``tests``
package into site-packages (ppi-python 0.2.3 does) would otherwise shadow it."""
