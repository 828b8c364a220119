"""cachedpages: a publication of the classic publisher turned into a stage
(docs/configuration.md, "Turning a publication into stages")."""
