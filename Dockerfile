# calib's dashboard as a container.
#
#   docker build -t calib .
#   docker run --rm -p 8501:8501 -v calib-data:/data calib        # then open http://localhost:8501
#
# Shared links live in the volume mounted at /data (CALIB_DATA_DIR). Configuration is by
# environment variable (-e NAME=value); see the README's "Hosting" section.
# CI runs this file's pip install, CMD and HEALTHCHECK in a fresh virtualenv
# (.ci/check_docker.sh), since the CI machines have no Docker engine: keep the RUN pip
# install line, the CMD and the HEALTHCHECK in the plain exec form used below.

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    CALIB_DATA_DIR=/data \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

WORKDIR /app

# Pinned runtime requirements first, so code changes do not reinstall them.
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

# An unprivileged user owns only the data volume; the code stays root-owned and read-only to it.
RUN useradd --create-home --uid 10001 --user-group calib \
    && mkdir -p /data \
    && chown calib:calib /data \
    && chmod 700 /data
COPY . .

USER calib
VOLUME ["/data"]
EXPOSE 8501

# slim has no curl: probe Streamlit's health endpoint with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status == 200 else 1)"]

# 0.0.0.0 explicitly: .streamlit/config.toml binds 127.0.0.1, which inside a container would
# be unreachable through the published port.
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true"]
