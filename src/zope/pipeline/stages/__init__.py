"""The standard stages, one concern and one module each.

Each module declares, at its top, the settings its stage accepts (an
interface of zope.schema fields) and the environ keys it reads or writes.
"""
