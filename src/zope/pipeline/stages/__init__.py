"""The standard stages, one concern and one module each.

Each module declares, at its top, the settings its stage accepts (an
interface of zope.schema fields); its stage factory declares, once, the
environ keys it reads and writes (its ``contract``, a
``zope.pipeline.engine.contract.Contract``) and takes ``build``, the chain
being
built (``IStageFactory``).
"""
