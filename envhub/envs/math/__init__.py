"""Math: arithmetic word problems with integer answers; the final answer goes in ``\\boxed{}``."""
