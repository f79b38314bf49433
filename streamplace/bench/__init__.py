"""The main job (demo), sweeps and reports."""
