"""Environment access shared by every settings module."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

# A local .env file is read when present; real environment variables win.
_dotenv = BASE_DIR / ".env"
if _dotenv.is_file():
    environ.Env.read_env(str(_dotenv), overwrite=False)

# Local state of the embedded defaults: PostgreSQL data, filesystem broker, beat schedule.
VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
