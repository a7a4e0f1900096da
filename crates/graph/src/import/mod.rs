//! (being written) Importers.
