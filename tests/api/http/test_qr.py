"""GET /qr/{code}.png and .svg, and Product.qrUrl, decoded as a phone would."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ElementTree

import pytest
import zxingcpp
from PIL import Image

from api.http.qr import IMMUTABLE, PNG_TARGET_PIXELS
from domain.labels import verify_url

PUBLIC_URL = "http://127.0.0.1:8000"  # Settings.url of the test gateway, no PUBLIC_URL set
QR_URL = "query($p: ID!) { product(id: $p) { qrUrl } }"


def decoded(png: bytes) -> str:
    image = Image.open(io.BytesIO(png))
    barcode = zxingcpp.read_barcode(image)
    assert barcode is not None, "no QR code found in the image"
    assert barcode.format == zxingcpp.BarcodeFormat.QRCode
    text: str = barcode.text
    return text


async def test_the_png_decodes_to_the_verify_url_and_is_cached_forever(sqlite_gateway) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    response = await gateway.http.get(f"/qr/{code}.png")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"
    assert response.headers["cache-control"] == IMMUTABLE
    assert decoded(response.content) == verify_url(PUBLIC_URL, code)
    assert verify_url(PUBLIC_URL, code) == f"{PUBLIC_URL}/verify/{code}"
    width, height = Image.open(io.BytesIO(response.content)).size
    assert width == height and PNG_TARGET_PIXELS * 0.9 <= width <= PNG_TARGET_PIXELS
    sloppy = await gateway.http.get(f"/qr/{code.lower().replace('-', '')}.png")
    assert decoded(sloppy.content) == f"{PUBLIC_URL}/verify/{code}"


async def test_the_svg_is_the_same_code(sqlite_gateway) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    svg = await gateway.http.get(f"/qr/{code}.svg")
    assert svg.status_code == 200
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.headers["cache-control"] == IMMUTABLE
    root = ElementTree.fromstring(svg.content)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"


@pytest.mark.parametrize("path", ["/qr/ABCD-EFGH-JKMN.png", "/qr/not-a-code.svg", "/qr/{code}.gif"])
async def test_unknown_codes_and_formats_are_404_and_not_cached(sqlite_gateway, path: str) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    product = await gateway.register_product(brand)
    response = await gateway.http.get(path.format(code=product["verificationCode"]))
    assert response.status_code == 404
    assert "cache-control" not in response.headers


async def test_qr_url_is_for_the_brand_only_and_serves_the_image(sqlite_gateway) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand()
    other = await gateway.register_brand()
    product = await gateway.register_product(brand)
    code = product["verificationCode"]
    url = (await gateway.data(QR_URL, {"p": product["id"]}, key=brand.key))["product"]["qrUrl"]
    assert url == f"{PUBLIC_URL}/qr/{code}.png"
    image = await gateway.http.get(url.removeprefix(PUBLIC_URL))
    assert decoded(image.content) == f"{PUBLIC_URL}/verify/{code}"
    foreign = await gateway.execute(QR_URL, {"p": product["id"]}, key=other.key)
    assert gateway.codes(foreign) == ["NOT_FOUND"]
