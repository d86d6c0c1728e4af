"""The components' Beam arguments (`args`) and the Dask cluster they may run on (`dask`); read by the compiler."""
