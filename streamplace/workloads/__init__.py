"""Bundled workloads: topologies, clusters and data generators."""
