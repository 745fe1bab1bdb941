"""``judge doctor``: placeholder."""


def doctor_cmd() -> None:
    """Check the key, the endpoint, its models, the model's price and the folders."""
