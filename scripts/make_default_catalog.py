"""Generate the shipped demo catalog, ``catalog/data/products.jsonl``.

The project wrote this data itself: brands and models are invented (any likeness
to real products is coincidental) and prices are illustrative USD, not quotes.
Each product comes from a hand-written template (title, specific description,
price band, tags) crossed with a few brands and variants; a seeded RNG picks
prices and ratings, so re-running the script reproduces the file byte for byte.

Usage: ``python scripts/make_default_catalog.py [--out PATH] [--seed N]``
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "catalog" / "data" / "products.jsonl"
SEED = 20240611
# A few products have no reviews yet so rating filters have something to exclude.
UNRATED_SHARE = 0.06


@dataclass(frozen=True)
class Template:
    """One kind of product; every brand x variant pair becomes a product."""

    title: str  # format string with {brand} and variant keys
    description: str
    price: tuple[float, float]  # band for the cheapest variant
    tags: tuple[str, ...]
    brands: tuple[str, ...]
    variants: tuple[dict[str, Any], ...] = ({},)
    options: dict[str, list[str]] = field(default_factory=dict)


def v(**kwargs: Any) -> dict[str, Any]:
    return kwargs


CAMERAS: tuple[Template, ...] = (
    Template(
        "{brand} {model} {mp}MP Full-Frame Mirrorless Camera Body",
        "{mp}-megapixel full-frame BSI sensor with in-body stabilisation rated to {ibis} stops, "
        "4K/60p 10-bit video, a 3.69M-dot OLED viewfinder and dual UHS-II card slots in a "
        "weather-sealed magnesium body. Eye-detection autofocus tracks people, animals and birds.",
        (1299, 1299),
        ("mirrorless", "camera", "full frame", "4k video", "interchangeable lens"),
        ("Lumora", "Halden", "Vantor"),
        (
            v(model="Z-7", mp=24, ibis=7, mul=1.0),
            v(model="Z-9R", mp=45, ibis=8, mul=1.9),
            v(model="Z-5e", mp=33, ibis=6, mul=1.4),
        ),
    ),
    Template(
        "{brand} {model} APS-C Mirrorless Camera with 18-55mm Kit Lens",
        "Compact {mp}MP APS-C mirrorless camera bundled with a stabilised 18-55mm f/3.5-5.6 zoom. "
        "Flip-out touchscreen for vlogging, 4K/30p video, Wi-Fi and Bluetooth transfer to your "
        "phone, and about {shots} shots per charge. A friendly first step up from a phone.",
        (649, 699),
        ("mirrorless", "camera", "aps-c", "kit lens", "beginner", "vlogging"),
        ("Lumora", "Fotoform", "Vantor"),
        (v(model="A-100", mp=24, shots=420, mul=1.0), v(model="A-300", mp=26, shots=510, mul=1.45)),
    ),
    Template(
        "{brand} {model} Compact Travel Zoom Camera",
        "Pocketable 20MP 1-inch sensor camera with a {zoom}x optical zoom, pop-up viewfinder and "
        "4K video. Charges over USB-C and fits a jacket pocket, so it comes along on every trip.",
        (449, 549),
        ("compact camera", "point and shoot", "travel", "zoom"),
        ("Pixwell", "Halden"),
        (v(model="TX10", zoom=10, mul=1.0), v(model="TX15", zoom=15, mul=1.3)),
    ),
    Template(
        "{brand} {focal}mm f/{aperture} Prime Lens for {mount} Mount",
        "Sharp, fast {focal}mm prime with an f/{aperture} maximum aperture for creamy "
        "background blur. {blades}-blade rounded diaphragm, quiet stepping AF motor suited "
        "to video, and a {weight} g build that balances well on small bodies. {use}",
        (129, 189),
        ("lens", "prime lens", "portrait", "low light"),
        ("Aperta", "Kestrel Optics", "Lumora"),
        (
            v(
                focal=50,
                aperture="1.8",
                blades=7,
                weight=170,
                mul=1.0,
                mount="E",
                use="The classic nifty-fifty: a first upgrade that costs less than dinner out.",
            ),
            v(
                focal=35,
                aperture="1.8",
                blades=9,
                weight=210,
                mul=1.25,
                mount="Z",
                use="A natural street and everyday focal length.",
            ),
            v(
                focal=85,
                aperture="1.4",
                blades=11,
                weight=640,
                mul=4.5,
                mount="RF",
                use="Flattering compression for head-and-shoulders portraits.",
            ),
            v(
                focal=24,
                aperture="1.4",
                blades=9,
                weight=480,
                mul=4.0,
                mount="E",
                use="Wide and bright for astrophotography and interiors.",
            ),
        ),
    ),
    Template(
        "{brand} {range} f/{aperture} Zoom Lens for {mount} Mount",
        "{kind} zoom covering {range} with a {aperture} aperture, optical stabilisation worth "
        "{ois} stops and moisture-resistant seals. Internal focusing keeps the front element "
        "from rotating, so polarising filters stay put.",
        (549, 649),
        ("lens", "zoom lens"),
        ("Kestrel Optics", "Aperta", "Halden"),
        (
            v(range="24-70mm", aperture="2.8", kind="Standard", ois=5, mul=1.8, mount="E"),
            v(range="70-200mm", aperture="4", kind="Telephoto", ois=5, mul=1.5, mount="Z"),
            v(range="16-35mm", aperture="4", kind="Ultra-wide", ois=4, mul=1.2, mount="RF"),
            v(
                range="100-400mm",
                aperture="4.5-5.6",
                kind="Super-telephoto",
                ois=6,
                mul=2.2,
                mount="E",
            ),
        ),
    ),
    Template(
        "{brand} {style} Camera Strap",
        "{detail} Rated for {load} kg and compatible with mirrorless, DSLR and compact cameras. "
        "A thoughtful gift for any photographer.",
        (19, 29),
        ("camera strap", "strap", "accessory", "gift"),
        ("Strapworks", "Northlight", "Halden", "Kestrel Optics"),
        (
            v(
                style="Quick-Release Sling",
                load=25,
                mul=1.6,
                detail="Slim seatbelt-webbing sling with anodised aluminium quick-release anchors; "
                "adjusts from neck to cross-body length with one pull.",
            ),
            v(
                style="Padded Neoprene Neck",
                load=10,
                mul=1.0,
                detail="Stretchy neoprene pad spreads the weight of a heavy body and zoom lens "
                "across your shoulders on long shoots.",
            ),
            v(
                style="Full-Grain Leather",
                load=15,
                mul=2.2,
                detail="Vegetable-tanned leather strap that darkens with use, with brass hardware "
                "and split rings.",
            ),
            v(
                style="Braided Cotton Rope",
                load=8,
                mul=1.2,
                detail="Soft hand-braided cotton rope strap in five colours; a stylish pick for "
                "instant and film cameras.",
            ),
            v(
                style="Wrist",
                load=5,
                mul=0.8,
                detail="Minimal paracord wrist loop that keeps a compact camera secure while "
                "staying out of the way.",
            ),
        ),
        {"color": ["black", "charcoal", "sage", "tan"]},
    ),
    Template(
        "{brand} {pieces}-Piece Lens Cleaning Kit",
        "Everything to keep glass spotless: {contents}. Safe on multi-coated lenses, filters, "
        "sensors' outer glass and phone cameras; packs into a zip pouch.",
        (12, 18),
        ("lens cleaning", "cleaning kit", "accessory", "gift"),
        ("ClearView", "Northlight", "Pixwell"),
        (
            v(
                pieces=5,
                mul=1.0,
                contents="an air blower, lens pen, two microfibre cloths and "
                "30 ml of alcohol-free cleaning fluid",
            ),
            v(
                pieces=9,
                mul=1.6,
                contents="a silicone air blower, retractable lens pen, "
                "anti-static brush, sensor swabs, fluid and three "
                "microfibre cloths",
            ),
        ),
    ),
    Template(
        '{brand} {material} Travel Tripod {height}" with Ball Head',
        "{material} travel tripod that folds to {folded} cm and extends to {height} inches, "
        "holding up to {load} kg. Arca-Swiss compatible ball head with independent pan lock, "
        "one leg converts to a monopod, and a carry bag is included.",
        (59, 79),
        ("tripod", "travel tripod", "ball head", "landscape"),
        ("Kestrel Optics", "Stablo", "Northlight"),
        (
            v(material="Aluminium", height=60, folded=40, load=8, mul=1.0),
            v(material="Carbon Fibre", height=64, folded=38, load=12, mul=2.6),
            v(material="Aluminium", height=72, folded=48, load=10, mul=1.3),
        ),
    ),
    Template(
        "{brand} Flexible Tabletop Tripod {model} with Phone Mount",
        'Bendable-leg mini tripod that wraps around railings and branches, with a 1/4"-20 mount '
        "for compact cameras and a clamp for phones. Holds {load} kg; Bluetooth remote included.",
        (19, 29),
        ("tripod", "mini tripod", "phone", "vlogging", "gift"),
        ("Stablo", "Pixwell"),
        (v(model="Mini", load=1, mul=1.0), v(model="Max", load=3, mul=1.5)),
    ),
    Template(
        "{brand} {capacity}GB SDXC UHS-{uhs} V{vclass} Memory Card",
        "Reads up to {read} MB/s and writes up to {write} MB/s, fast enough for {use}. "
        "Waterproof, temperature-proof and X-ray-proof, with free recovery software.",
        (14, 19),
        ("sd card", "memory card", "storage", "sdxc"),
        ("Vaultex", "Pixwell", "Lumora"),
        (
            v(
                capacity=64,
                uhs="I",
                vclass=30,
                read=170,
                write=90,
                mul=1.0,
                use="4K video and continuous bursts",
            ),
            v(
                capacity=128,
                uhs="I",
                vclass=30,
                read=200,
                write=140,
                mul=1.6,
                use="4K video and continuous bursts",
            ),
            v(
                capacity=128,
                uhs="II",
                vclass=60,
                read=280,
                write=180,
                mul=4.0,
                use="high-bitrate 4K/60p and long raw bursts",
            ),
            v(
                capacity=256,
                uhs="II",
                vclass=90,
                read=300,
                write=260,
                mul=8.5,
                use="8K video and the fastest mirrorless bodies",
            ),
        ),
    ),
    Template(
        "{brand} {size}L {style} Camera Bag",
        "{detail} Padded, configurable dividers fit {fits}; water-repellent shell with a "
        "stowable rain cover and a luggage pass-through.",
        (39, 59),
        ("camera bag", "bag", "travel"),
        ("Trailpack", "Northlight", "Halden"),
        (
            v(
                size=6,
                style="Everyday Sling",
                mul=1.0,
                fits="a mirrorless body and two lenses",
                detail="Low-profile sling that swings to the front for quick lens changes.",
            ),
            v(
                size=20,
                style="Travel Backpack",
                mul=2.6,
                fits="two bodies, four lenses and a 15-inch laptop",
                detail="Side and rear access backpack with a sternum strap and tripod carry.",
            ),
            v(
                size=10,
                style="Waxed Canvas Messenger",
                mul=1.7,
                fits="a camera body, three lenses and a tablet",
                detail="Heritage waxed-canvas messenger with leather trim and magnetic clasps.",
            ),
        ),
    ),
    Template(
        "{brand} {model} Instant Camera",
        "Point, shoot and hold a credit-card-sized print in about {sec} seconds. Automatic "
        "exposure, a selfie mirror, close-up mode and {extra}. Takes standard mini instant film.",
        (69, 79),
        ("instant camera", "camera", "film", "gift", "party"),
        ("Snapwell", "Polaroo"),
        (
            v(model="Mini 12", sec=90, mul=1.0, extra="five pastel colours"),
            v(
                model="Mini Evo",
                sec=80,
                mul=2.1,
                extra="a hybrid mode that also saves images to a microSD card",
            ),
        ),
    ),
    Template(
        "{brand} Mini Instant Film Twin Pack, {look} ({shots} Exposures)",
        "{shots} glossy credit-card-size exposures for mini-format instant cameras. {finish}",
        (14, 16),
        ("instant film", "film", "instant camera", "refill"),
        ("Snapwell", "Polaroo"),
        (
            v(shots=20, mul=1.0, look="Classic White", finish="Classic white borders."),
            v(
                shots=20,
                mul=1.15,
                look="Rainbow Border",
                finish="Rainbow and macaron coloured borders.",
            ),
        ),
    ),
    Template(
        "{brand} {iso} 35mm Colour Film, 36 Exposures ({count}-Pack)",
        "ISO {iso} colour negative film with {look}. Develops in standard C-41 chemistry.",
        (11, 13),
        ("35mm film", "film", "analog"),
        ("Fotoform", "Halden"),
        (
            v(iso=200, count=3, mul=2.4, look="fine grain and warm, nostalgic colours"),
            v(iso=400, count=1, mul=1.0, look="punchy colours and wide exposure latitude"),
        ),
    ),
    Template(
        "{brand} {kind} Filter {size}mm",
        "{detail} Multi-coated optical glass in a slim brass ring that will not vignette on "
        "wide angles.",
        (24, 34),
        ("lens filter", "filter", "landscape"),
        ("ClearView", "Kestrel Optics"),
        (
            v(
                kind="Circular Polariser",
                size=67,
                mul=1.5,
                detail="Cuts glare off water and deepens blue skies.",
            ),
            v(
                kind="Variable ND 2-8 Stop",
                size=77,
                mul=2.8,
                detail="Lets you shoot wide open in daylight and blur waterfalls.",
            ),
            v(
                kind="UV Protection",
                size=58,
                mul=1.0,
                detail="Clear protective filter that guards the front element from scratches.",
            ),
        ),
    ),
    Template(
        "{brand} Wireless Shutter Remote ({range} m Range)",
        "Bluetooth remote with a {range} m range for self-portraits, long exposures and "
        "time-lapses with a built-in intervalometer.",
        (19, 24),
        ("remote", "shutter release", "accessory"),
        ("Pixwell", "Stablo"),
        (v(range=10, mul=1.0), v(range=30, mul=1.6)),
    ),
    Template(
        "{brand} Rechargeable Camera Battery {spec} with USB-C Charger",
        "{spec} lithium-ion replacement battery with protection circuitry and a dual USB-C "
        "charger, so a spare is always topped up for long shoot days.",
        (29, 39),
        ("battery", "charger", "accessory"),
        ("Vaultex", "Lumora"),
        (v(spec="2280mAh", mul=1.0), v(spec="2-Pack 2280mAh", mul=1.6)),
    ),
    Template(
        "{brand} Bi-Colour LED Video Light {size}",
        "On-camera LED panel adjustable from 3200 K to 5600 K with CRI 96+, a built-in battery "
        "for {hours} hours at full power and a cold-shoe mount.",
        (39, 49),
        ("led light", "lighting", "video", "vlogging"),
        ("Northlight", "Pixwell"),
        (v(size="Pocket", hours=2, mul=1.0), v(size="Panel 12-inch", hours=3, mul=3.2)),
    ),
    Template(
        "{brand} {size} Layflat Photo Album",
        "Linen-bound layflat album with {pages} acid-free pages and a window for a cover print; "
        "a lasting home for trip photos and instant prints.",
        (24, 32),
        ("photo album", "photo book", "gift", "prints"),
        ("Paperlight", "Northlight"),
        (v(size="8x8", pages=40, mul=1.0), v(size="12x12", pages=60, mul=1.7)),
    ),
)

RUNNING: tuple[Template, ...] = (
    Template(
        "{brand} {model} {gender} Road Running Shoe",
        "{feel} cushioning with a {drop} mm drop, an engineered-mesh upper and a "
        "rubberised outsole good for about {km} km. {note}",
        (109, 139),
        ("running shoes", "shoes", "road running"),
        ("Stridewell", "Apex Run", "Velo Athletic"),
        (
            v(
                model="Glide 5",
                gender="Men's",
                feel="Soft, bouncy",
                drop=8,
                km=700,
                mul=1.0,
                note="A dependable daily trainer for easy miles.",
            ),
            v(
                model="Glide 5",
                gender="Women's",
                feel="Soft, bouncy",
                drop=8,
                km=700,
                mul=1.0,
                note="A dependable daily trainer for easy miles.",
            ),
            v(
                model="Tempo Carbon",
                gender="Unisex",
                feel="Firm, propulsive carbon-plated",
                drop=6,
                km=400,
                mul=1.6,
                note="Built for race day and threshold workouts.",
            ),
        ),
        {"size": ["7", "8", "9", "10", "11", "12"], "color": ["black", "white", "volt"]},
    ),
    Template(
        "{brand} {model} Trail Running Shoe",
        "Grippy {lug} mm lugs, a rock plate and a gusseted tongue that keeps grit out; {extra}",
        (119, 149),
        ("trail running", "running shoes", "shoes", "outdoor"),
        ("Apex Run", "Ridgeline"),
        (
            v(model="Crag", lug=5, mul=1.0, extra="sticky rubber for wet rock."),
            v(model="Crag GTX", lug=5, mul=1.2, extra="a waterproof membrane for winter trails."),
        ),
        {"size": ["7", "8", "9", "10", "11", "12"]},
    ),
    Template(
        "{brand} {model} GPS Running Watch",
        "Multi-band GPS, wrist heart rate, {battery} days of battery in smartwatch mode and "
        "{extra}. Syncs workouts to your phone and supports structured intervals.",
        (179, 199),
        ("gps watch", "running watch", "fitness tracker", "wearable"),
        ("Pacer", "Velo Athletic"),
        (
            v(model="Forge 55", battery=14, mul=1.0, extra="daily suggested workouts"),
            v(
                model="Forge 265",
                battery=13,
                mul=2.2,
                extra="an AMOLED screen and training readiness",
            ),
            v(
                model="Summit 955",
                battery=16,
                mul=2.9,
                extra="offline topo maps and solar charging",
            ),
        ),
    ),
    Template(
        "{brand} {model} Fitness Tracker Band",
        "Slim band that tracks steps, sleep stages, SpO2 and heart rate with {battery}-day "
        "battery life and a {screen} display.",
        (39, 59),
        ("fitness tracker", "wearable", "sleep tracking"),
        ("Pacer", "Pulsewise"),
        (
            v(model="Band 4", battery=10, screen="colour AMOLED", mul=1.0),
            v(model="Band 4 Pro", battery=14, screen="always-on AMOLED", mul=1.6),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (12, 19),
        ("running", "accessory"),
        ("Stridewell", "Pulsewise", "Velo Athletic"),
        (
            v(
                item="Running Belt with Bottle Holders",
                mul=1.5,
                detail="Bounce-free stretch belt with two 250 ml soft flasks and a phone pocket.",
            ),
            v(
                item="Reflective Running Vest",
                mul=1.3,
                detail="Lightweight mesh vest with 360-degree reflective tape for pre-dawn runs.",
            ),
            v(
                item="Merino Running Socks (3 Pairs)",
                mul=1.4,
                detail="Cushioned merino-blend socks with arch support that resist blisters.",
            ),
            v(
                item="Handheld Soft Flask 500ml",
                mul=1.0,
                detail="Collapsible bottle in a hand strap with a key pocket.",
            ),
        ),
    ),
    Template(
        "{brand} Adjustable Dumbbells {range}",
        "Dial-select dumbbells that replace {pairs} pairs of weights, adjusting {range} in "
        "{step} increments. A space-saving home-gym staple.",
        (199, 229),
        ("dumbbells", "strength", "home gym"),
        ("IronNest", "Corefit"),
        (
            v(range="5-52.5 lb", pairs=15, step="2.5 lb", mul=1.6),
            v(range="2-24 kg", pairs=12, step="2 kg", mul=1.0),
        ),
    ),
    Template(
        "{brand} {thickness}mm {material} Yoga Mat",
        "{material} mat with alignment lines and a grippy, sweat-resistant surface; "
        "{thickness} mm of cushioning for knees. Carry strap included.",
        (24, 34),
        ("yoga mat", "yoga", "pilates", "home gym"),
        ("Corefit", "Lotus Lane"),
        (
            v(thickness=6, material="TPE", mul=1.0),
            v(thickness=5, material="Natural Rubber", mul=2.5),
        ),
        {"color": ["plum", "slate", "sea green"]},
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (14, 29),
        ("home gym", "recovery", "strength"),
        ("Corefit", "IronNest", "Pulsewise"),
        (
            v(
                item="Resistance Band Set (5 Levels)",
                mul=1.0,
                detail="Latex-free loop bands from 5 to 40 lb with a door anchor and handles.",
            ),
            v(
                item="High-Density Foam Roller 18-inch",
                mul=1.0,
                detail="Textured EVA roller for calves, quads and IT bands after long runs.",
            ),
            v(
                item="Percussion Massage Gun",
                mul=4.0,
                detail="Quiet brushless motor with five heads and 3200 percussions per minute.",
            ),
            v(
                item="Speed Jump Rope with Ball Bearings",
                mul=0.7,
                detail="Tangle-free steel cable rope for double-unders and conditioning.",
            ),
            v(
                item="Kettlebell 16 kg Cast Iron",
                mul=2.4,
                detail="Single-cast iron kettlebell with a wide powder-coated handle.",
            ),
        ),
    ),
    Template(
        "{brand} {model} Wireless Open-Ear Sport Headphones",
        "Bone-conduction headphones that leave your ears open to traffic, IP{ip} sweat "
        "resistance and {hours} hours of playback.",
        (79, 99),
        ("headphones", "running", "open ear", "bluetooth"),
        ("Pulsewise", "Soundrift"),
        (v(model="Run", ip=55, hours=8, mul=1.0), v(model="Swim", ip=68, hours=10, mul=1.6)),
    ),
)

COFFEE: tuple[Template, ...] = (
    Template(
        "{brand} {model} Espresso Machine",
        "{detail} 15-bar pump, PID temperature control and a commercial-style steam wand "
        "for microfoam; {extra}",
        (299, 349),
        ("espresso machine", "coffee", "espresso"),
        ("Crema & Co", "Bellacasa", "Barista Pro"),
        (
            v(
                model="Uno",
                mul=1.0,
                detail="Compact single-boiler machine that heats in 30 s.",
                extra="a pressurised and a non-pressurised basket are included.",
            ),
            v(
                model="Duo",
                mul=1.9,
                detail="Dual-boiler machine with a built-in conical burr grinder.",
                extra="30 grind settings dial in any bean.",
            ),
            v(
                model="Lever",
                mul=2.6,
                detail="Manual lever machine for hands-on pressure profiling.",
                extra="chrome body built to be repaired, not replaced.",
            ),
        ),
    ),
    Template(
        "{brand} {kind} Burr Coffee Grinder",
        "{burr} burrs with {settings} grind settings from espresso-fine to cold-brew coarse. "
        "{extra}",
        (49, 69),
        ("coffee grinder", "grinder", "coffee"),
        ("Crema & Co", "Grindhaus", "Bellacasa"),
        (
            v(
                kind="Electric Conical",
                burr="40 mm stainless conical",
                settings=40,
                mul=1.8,
                extra="Anti-static cup and a timed dose button.",
            ),
            v(
                kind="Manual Hand",
                burr="38 mm hardened steel",
                settings=30,
                mul=1.0,
                extra="Travels well for camping and the office.",
            ),
            v(
                kind="Flat",
                burr="64 mm flat",
                settings=100,
                mul=5.0,
                extra="Single-dose hopper with near-zero retention.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (19, 34),
        ("coffee", "pour over", "brewing"),
        ("Grindhaus", "Bellacasa", "Kettle & Pine"),
        (
            v(
                item="Gooseneck Electric Kettle 1L",
                mul=2.0,
                detail="Variable temperature from 40 to 100 C with a hold mode for pour-over.",
            ),
            v(
                item="Glass Pour-Over Coffee Maker 6-Cup",
                mul=1.0,
                detail="Heat-resistant borosilicate carafe with a reusable stainless filter.",
            ),
            v(
                item="French Press 34 oz Double-Wall",
                mul=1.2,
                detail="Insulated stainless press that keeps coffee hot for an hour.",
            ),
            v(
                item="Digital Coffee Scale with Timer",
                mul=0.9,
                detail="0.1 g resolution scale with a flow timer and auto-tare.",
            ),
            v(
                item="Cold Brew Coffee Maker 2L",
                mul=0.9,
                detail="Fine-mesh filter in an airtight pitcher; steep overnight in the fridge.",
            ),
            v(
                item="Milk Frother Handheld",
                mul=0.5,
                detail="Battery whisk that froths milk for lattes in 15 seconds.",
            ),
        ),
    ),
    Template(
        "{brand} {origin} Whole Bean Coffee {weight}",
        "{roast} roast single-origin beans from {origin} with notes of {notes}. Roasted to order "
        "and shipped within 48 hours.",
        (14, 18),
        ("coffee beans", "coffee", "whole bean", "gift"),
        ("Kettle & Pine", "Ridge Roasters"),
        (
            v(
                origin="Ethiopia Yirgacheffe",
                weight="12 oz",
                roast="Light",
                mul=1.1,
                notes="jasmine, lemon and bergamot",
            ),
            v(
                origin="Colombia Huila",
                weight="12 oz",
                roast="Medium",
                mul=1.0,
                notes="caramel, red apple and cocoa",
            ),
            v(
                origin="Sumatra Mandheling",
                weight="2 lb",
                roast="Dark",
                mul=2.2,
                notes="cedar, dark chocolate and spice",
            ),
        ),
    ),
    Template(
        "{brand} {size}-Inch {material} Skillet",
        "{detail} Oven-safe to {temp} F and works on induction.",
        (29, 39),
        ("skillet", "cookware", "frying pan", "kitchen"),
        ("Hearthstone", "Bellacasa"),
        (
            v(
                size=10,
                material="Pre-Seasoned Cast Iron",
                temp=650,
                mul=1.0,
                detail="Heavy cast iron that sears steaks and bakes cornbread.",
            ),
            v(
                size=12,
                material="Tri-Ply Stainless Steel",
                temp=600,
                mul=2.0,
                detail="Aluminium core clad in stainless for even heating.",
            ),
            v(
                size=11,
                material="Ceramic Nonstick",
                temp=450,
                mul=1.3,
                detail="PFAS-free ceramic coating that releases eggs cleanly.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (39, 59),
        ("kitchen", "appliance"),
        ("Bellacasa", "Hearthstone", "Kitchora"),
        (
            v(
                item="5.8 Qt Air Fryer",
                mul=1.6,
                detail="Crisps with little oil; dishwasher-safe basket and eight presets.",
            ),
            v(
                item="6 Qt Multi-Cooker",
                mul=1.8,
                detail="Pressure cooks, slow cooks, steams and makes yogurt.",
            ),
            v(
                item="Personal Blender 600W",
                mul=1.0,
                detail="Blends smoothies straight into two 20 oz travel cups.",
            ),
            v(
                item="Stand Mixer 5.5 Qt",
                mul=5.0,
                detail="Tilt-head mixer with a dough hook, whisk and flat beater.",
            ),
            v(
                item="Sous Vide Precision Cooker",
                mul=2.2,
                detail="Holds water within 0.1 C for edge-to-edge doneness; Wi-Fi app.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (29, 49),
        ("knife", "kitchen", "cutlery"),
        ("Kitchora", "Hearthstone"),
        (
            v(
                item="8-Inch Chef's Knife",
                mul=1.6,
                detail="High-carbon German steel blade with a full tang and pakkawood handle.",
            ),
            v(
                item="End-Grain Walnut Cutting Board",
                mul=2.0,
                detail="Self-healing end-grain board with juice groove, 16 x 12 inches.",
            ),
            v(
                item="Whetstone Sharpening Kit 1000/6000",
                mul=0.9,
                detail="Two-sided water stone with an angle guide and non-slip base.",
            ),
        ),
    ),
)

HOME_OFFICE: tuple[Template, ...] = (
    Template(
        "{brand} Electric Standing Desk {width}x{depth}",
        "Dual-motor frame that rises from {low} to {high} inches in seconds, with four memory "
        "presets and anti-collision sensing. {top} top.",
        (279, 299),
        ("standing desk", "desk", "ergonomic", "furniture"),
        ("Deskwell", "Officina", "Loftline"),
        (
            v(width=48, depth=24, low=28, high=47, top="Bamboo", mul=1.0),
            v(width=60, depth=30, low=25, high=50, top="Walnut veneer", mul=1.7),
        ),
    ),
    Template(
        "{brand} {model} Ergonomic Office Chair",
        "Breathable mesh back with adjustable lumbar support, 4D armrests, seat-depth slide and "
        "a {recline}-degree recline lock. {extra}",
        (199, 249),
        ("office chair", "ergonomic", "chair", "furniture"),
        ("Officina", "Posture Lab"),
        (
            v(model="Flex", recline=120, mul=1.0, extra="Rated for 275 lb."),
            v(
                model="Flex Pro",
                recline=135,
                mul=2.4,
                extra="Adds a headrest and a 12-year warranty.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (19, 39),
        ("desk accessory", "home office", "ergonomic"),
        ("Deskwell", "Loftline", "Posture Lab"),
        (
            v(
                item="Aluminium Laptop Stand",
                mul=1.2,
                detail="Raises a laptop screen to eye level; folds flat for the commute.",
            ),
            v(
                item="Single Monitor Arm Gas Spring",
                mul=2.0,
                detail="Holds 17-32 inch monitors up to 9 kg with cable management.",
            ),
            v(
                item="Felt Desk Mat 36x17",
                mul=0.8,
                detail="Wool-felt desk pad that quiets the keyboard and protects the desk.",
            ),
            v(
                item="Under-Desk Cable Management Tray",
                mul=0.9,
                detail="Steel tray that hides power strips and chargers; no drilling clamps.",
            ),
            v(
                item="Memory Foam Footrest",
                mul=1.0,
                detail="Rocking footrest that encourages movement while seated.",
            ),
            v(
                item="LED Desk Lamp with Wireless Charger",
                mul=1.5,
                detail="Five colour temperatures, dimmable, with a 10 W Qi pad in the base.",
            ),
            v(
                item="Monitor Light Bar",
                mul=1.7,
                detail="Asymmetric light bar that lights the desk without screen glare.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (9, 19),
        ("stationery", "notebook", "home office", "gift"),
        ("Paperlight", "Inkwell & Co"),
        (
            v(
                item="A5 Dotted Hardcover Notebook",
                mul=1.0,
                detail="192 pages of 100 gsm fountain-pen-friendly paper with a lay-flat binding.",
            ),
            v(
                item="Fountain Pen Starter Set",
                mul=2.0,
                detail="Steel medium nib, converter and six ink cartridges in a gift box.",
            ),
            v(
                item="Weekly Desk Planner Pad",
                mul=0.8,
                detail="Undated tear-off weekly planner with priorities and habit tracker.",
            ),
            v(
                item="Gel Pen Set 0.5mm (12 Colours)",
                mul=0.7,
                detail="Quick-dry gel ink that does not smudge for left-handed writers.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (24, 49),
        ("webcam", "video calls", "home office", "computer accessory"),
        ("Clarix", "Soundrift"),
        (
            v(
                item="1080p Webcam with Privacy Shutter",
                mul=1.0,
                detail="Auto light correction and dual noise-reducing microphones.",
            ),
            v(
                item="4K Webcam with AI Framing",
                mul=2.8,
                detail="Keeps you centred as you move, with HDR for backlit rooms.",
            ),
            v(
                item="USB Condenser Microphone",
                mul=1.8,
                detail="Cardioid mic with a mute button and zero-latency headphone jack.",
            ),
        ),
    ),
)

LAPTOPS: tuple[Template, ...] = (
    Template(
        "{brand} {model} {screen}-Inch Laptop, {cpu}, {ram}GB RAM, {ssd} SSD",
        "{detail} {screen}-inch {panel} display, backlit keyboard, Wi-Fi 6E and around "
        "{hours} hours of battery life.",
        (549, 649),
        ("laptop", "computer", "notebook"),
        ("Northbook", "Zentrix", "Aeron Computing"),
        (
            v(
                model="Air 13",
                screen=13,
                cpu="8-core ARM",
                ram=16,
                ssd="512GB",
                panel="2.5K IPS",
                hours=18,
                mul=1.5,
                detail="Fanless aluminium ultraportable weighing 1.2 kg.",
            ),
            v(
                model="Flex 14",
                screen=14,
                cpu="Core Ultra 5",
                ram=16,
                ssd="512GB",
                panel="OLED touch",
                hours=12,
                mul=1.2,
                detail="2-in-1 convertible with a stylus.",
            ),
            v(
                model="Pro 16",
                screen=16,
                cpu="Core Ultra 9",
                ram=32,
                ssd="1TB",
                panel="3.2K 120Hz mini-LED",
                hours=10,
                mul=3.4,
                detail="Creator laptop with a discrete 8 GB GPU for photo and video editing.",
            ),
            v(
                model="Go 15",
                screen=15,
                cpu="Ryzen 5",
                ram=8,
                ssd="256GB",
                panel="FHD IPS",
                hours=9,
                mul=0.75,
                detail="Budget everyday laptop for school and browsing.",
            ),
        ),
    ),
    Template(
        "{brand} {model} {size}-Inch Tablet {storage}GB",
        "{detail} {size}-inch {panel} screen, quad speakers and USB-C charging.",
        (199, 249),
        ("tablet", "ebook", "streaming"),
        ("Zentrix", "Northbook"),
        (
            v(
                model="Tab 10",
                size="10.5",
                storage=64,
                panel="LCD",
                mul=1.0,
                detail="Family tablet with kids profiles.",
            ),
            v(
                model="Tab S11",
                size="11",
                storage=256,
                panel="120Hz OLED",
                mul=3.0,
                detail="Pen-ready tablet for notes and sketching.",
            ),
        ),
    ),
    Template(
        "{brand} {model} Wireless Noise-Cancelling Headphones",
        "Adaptive noise cancelling, {hours}-hour battery and multipoint Bluetooth {extra}.",
        (99, 129),
        ("headphones", "noise cancelling", "bluetooth", "audio"),
        ("Soundrift", "Aural"),
        (
            v(model="Q30", hours=40, mul=1.0, extra="with a foldable design"),
            v(model="Studio ANC", hours=30, mul=2.8, extra="plus lossless USB-C audio"),
        ),
    ),
    Template(
        "{brand} {model} True Wireless Earbuds",
        "{detail} Charging case adds {case} hours; IPX4 splash resistant.",
        (39, 59),
        ("earbuds", "bluetooth", "audio", "wireless"),
        ("Soundrift", "Aural", "Pulsewise"),
        (
            v(
                model="Buds Lite",
                case=24,
                mul=1.0,
                detail="Light, secure-fit buds with a punchy EQ.",
            ),
            v(
                model="Buds Pro 2",
                case=30,
                mul=3.2,
                detail="Hybrid ANC, spatial audio and wireless charging.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (19, 39),
        ("computer accessory", "electronics"),
        ("Clarix", "Vaultex", "Zentrix", "Keyforge"),
        (
            v(
                item="Wireless Ergonomic Mouse",
                mul=1.3,
                detail="Sculpted vertical grip with silent clicks, three devices, USB-C charging.",
            ),
            v(
                item="Low-Profile Mechanical Keyboard",
                mul=2.5,
                detail="Hot-swappable tactile switches, aluminium case, Bluetooth and USB-C.",
            ),
            v(
                item="7-in-1 USB-C Hub",
                mul=1.0,
                detail="4K HDMI, 100 W pass-through, SD and microSD readers, two USB-A ports.",
            ),
            v(
                item="1TB Portable SSD",
                mul=2.8,
                detail="Pocket-size NVMe drive with 1050 MB/s transfers; great for photo backups.",
            ),
            v(
                item="65W GaN USB-C Charger",
                mul=1.2,
                detail="Two USB-C ports and one USB-A; charges a laptop and phone together.",
            ),
            v(
                item="20000mAh Power Bank",
                mul=1.4,
                detail="Charges a phone four times; 30 W USB-C PD in and out.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (49, 69),
        ("smart home", "electronics"),
        ("Clarix", "Homely"),
        (
            v(
                item="Smart Speaker with Voice Assistant",
                mul=1.0,
                detail="Room-filling 360-degree sound and smart-home control.",
            ),
            v(
                item="Wi-Fi 6 Mesh Router (2-Pack)",
                mul=3.0,
                detail="Covers 4000 sq ft with seamless roaming and parental controls.",
            ),
            v(
                item="E-Ink Reader 7-Inch Waterproof",
                mul=2.2,
                detail="Glare-free 300 ppi screen with warm light; weeks of battery.",
            ),
        ),
    ),
)

OUTDOOR: tuple[Template, ...] = (
    Template(
        "{brand} {cap}-Person {kind} Tent",
        "{detail} Packs to {weight} kg with colour-coded poles and a full-coverage rainfly.",
        (129, 179),
        ("tent", "camping", "backpacking"),
        ("Ridgeline", "Trailpack", "Basecamp Co"),
        (
            v(
                cap=2,
                kind="Ultralight Backpacking",
                weight="1.3",
                mul=1.8,
                detail="Freestanding tent with two doors and vestibules.",
            ),
            v(
                cap=4,
                kind="Family Dome",
                weight="5.2",
                mul=1.0,
                detail="Tall dome with room to stand and a dark-room fabric for sleeping in.",
            ),
        ),
    ),
    Template(
        "{brand} {temp}F {fill} Sleeping Bag",
        "Mummy bag rated to {temp} F with {fill} insulation, a draft collar and a compression "
        "sack.",
        (69, 89),
        ("sleeping bag", "camping", "backpacking"),
        ("Ridgeline", "Basecamp Co"),
        (v(temp=30, fill="Synthetic", mul=1.0), v(temp=20, fill="650-Fill Down", mul=2.6)),
    ),
    Template(
        "{brand} {size}L {kind} Backpack",
        "{detail} Ventilated back panel, hip-belt pockets and a hydration sleeve.",
        (59, 89),
        ("backpack", "hiking", "daypack"),
        ("Trailpack", "Ridgeline"),
        (
            v(size=22, kind="Hiking Day", mul=1.0, detail="Light daypack with a rain cover."),
            v(size=55, kind="Trekking", mul=2.4, detail="Adjustable torso for multi-day trips."),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (19, 49),
        ("camping", "hiking", "outdoor gear"),
        ("Basecamp Co", "Ridgeline", "Trailpack", "Summitline"),
        (
            v(
                item="Rechargeable Headlamp 400 Lumen",
                mul=1.0,
                detail="Red night mode, IPX6, USB-C charging and a lock-out switch.",
            ),
            v(
                item="Carbon Trekking Poles (Pair)",
                mul=2.2,
                detail="Flick-lock carbon poles with cork grips at 230 g each.",
            ),
            v(
                item="Insulated Water Bottle 32 oz",
                mul=1.0,
                detail="Keeps drinks cold for 24 hours and hot for 12.",
            ),
            v(
                item="Backpacking Stove with Piezo Igniter",
                mul=1.5,
                detail="Boils a litre in 3.5 minutes on a standard canister.",
            ),
            v(
                item="Camp Chair Ultralight",
                mul=2.5,
                detail="Packs to the size of a water bottle and holds 145 kg.",
            ),
            v(
                item="Water Filter Squeeze System",
                mul=1.2,
                detail="0.1 micron hollow-fibre filter for streams and lakes.",
            ),
            v(
                item="Waterproof Dry Bag 20L",
                mul=0.8,
                detail="Roll-top bag that keeps gear dry on kayaks and boats.",
            ),
            v(
                item="8x42 Waterproof Binoculars",
                mul=5.0,
                detail="Fully multi-coated roof prisms for birding and hiking.",
            ),
        ),
    ),
    Template(
        "{brand} {gender} {item}",
        "{detail}",
        (79, 129),
        ("jacket", "outdoor clothing", "hiking"),
        ("Summitline", "Ridgeline"),
        (
            v(
                gender="Men's",
                item="Waterproof Rain Shell",
                mul=1.0,
                detail="2.5-layer breathable shell with pit zips and a helmet-compatible hood.",
            ),
            v(
                gender="Women's",
                item="Waterproof Rain Shell",
                mul=1.0,
                detail="2.5-layer breathable shell with pit zips and a helmet-compatible hood.",
            ),
            v(
                gender="Men's",
                item="Packable Down Jacket",
                mul=1.4,
                detail="800-fill responsibly sourced down that stuffs into its own pocket.",
            ),
            v(
                gender="Women's",
                item="Fleece Half-Zip Pullover",
                mul=0.7,
                detail="Grid fleece that breathes on climbs and layers under a shell.",
            ),
        ),
        {"size": ["xs", "s", "m", "l", "xl"]},
    ),
)

BEAUTY: tuple[Template, ...] = (
    Template(
        "{brand} {item}",
        "{detail}",
        (12, 24),
        ("skincare", "beauty"),
        ("Lumiere Botanics", "Dew & Co", "Pure Theory"),
        (
            v(
                item="Vitamin C Brightening Serum 30ml",
                mul=1.6,
                detail="15% L-ascorbic acid with vitamin E and ferulic acid to even skin tone.",
            ),
            v(
                item="Hyaluronic Acid Hydrating Serum 30ml",
                mul=1.2,
                detail="Multi-weight hyaluronic acid that plumps without stickiness.",
            ),
            v(
                item="Mineral Sunscreen SPF 50 50ml",
                mul=1.1,
                detail="Zinc oxide sunscreen with no white cast; reef-friendly.",
            ),
            v(
                item="Gentle Foaming Cleanser 150ml",
                mul=0.8,
                detail="pH-balanced cleanser with ceramides for sensitive skin.",
            ),
            v(
                item="Retinol Night Cream 50ml",
                mul=1.9,
                detail="Encapsulated 0.3% retinol with peptides for fine lines.",
            ),
            v(
                item="Overnight Lip Mask",
                mul=0.7,
                detail="Berry-scented balm that softens dry lips while you sleep.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (9, 19),
        ("makeup", "beauty", "cosmetics"),
        ("Velvet Muse", "Dew & Co"),
        (
            v(
                item="Volumising Mascara",
                mul=1.0,
                detail="Buildable, smudge-proof mascara with a curved fibre brush.",
            ),
            v(
                item="Matte Liquid Lipstick",
                mul=1.0,
                detail="Transfer-resistant matte lip colour that lasts eight hours.",
            ),
            v(
                item="Eyeshadow Palette 12 Neutrals",
                mul=2.0,
                detail="Buttery mattes and shimmers from champagne to espresso.",
            ),
            v(
                item="Tinted Moisturiser SPF 30",
                mul=1.6,
                detail="Sheer coverage with a dewy finish in 12 shades.",
            ),
        ),
        {"shade": ["light", "medium", "tan", "deep"]},
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (39, 69),
        ("hair care", "beauty", "hair tools"),
        ("Silkline", "Pure Theory"),
        (
            v(
                item="Ionic Hair Dryer 1875W",
                mul=1.0,
                detail="Three heat settings, a cool shot and a concentrator nozzle.",
            ),
            v(
                item="Ceramic Flat Iron 1-Inch",
                mul=0.8,
                detail="Floating ceramic plates up to 450 F with auto shut-off.",
            ),
            v(
                item="Hot Air Brush Volumiser",
                mul=1.1,
                detail="Dries and styles in one step with an oval barrel.",
            ),
            v(
                item="Argan Oil Shampoo & Conditioner Set",
                mul=0.5,
                detail="Sulfate-free duo for dry, colour-treated hair.",
            ),
        ),
    ),
    Template(
        "{brand} {scent} {item}",
        "{detail} Notes of {notes}.",
        (24, 34),
        ("fragrance", "beauty", "gift"),
        ("Maison Aurelle", "Lumiere Botanics"),
        (
            v(
                scent="Cedar & Sage",
                item="Eau de Parfum 50ml",
                mul=2.0,
                notes="cedar, sage, amber",
                detail="A warm woody fragrance.",
            ),
            v(
                scent="Neroli Bloom",
                item="Eau de Toilette 100ml",
                mul=1.5,
                notes="orange blossom, neroli, musk",
                detail="A bright citrus floral.",
            ),
            v(
                scent="Fig & Vetiver",
                item="Scented Candle 8oz",
                mul=1.0,
                notes="green fig, vetiver, cashmere wood",
                detail="Soy-blend candle with a 50-hour burn.",
            ),
        ),
    ),
)

TOYS: tuple[Template, ...] = (
    Template(
        "{brand} {game} Board Game",
        "{detail} For {players} players aged {age}+, about {minutes} minutes per game.",
        (24, 39),
        ("board game", "game night", "family", "gift"),
        ("Meeple Forge", "Tabletop Tales", "Brightbox Games"),
        (
            v(
                game="Harbour Lights",
                players="2-5",
                age=10,
                minutes=45,
                mul=1.2,
                detail="Build lighthouses and guide ships in a tile-laying strategy game.",
            ),
            v(
                game="Sky Orchard",
                players="1-4",
                age=8,
                minutes=30,
                mul=1.0,
                detail="Cosy engine builder about planting trees on floating islands.",
            ),
            v(
                game="Cipher Station",
                players="4-8",
                age=12,
                minutes=20,
                mul=0.8,
                detail="Team word-deduction party game with spy codenames.",
            ),
            v(
                game="Rails of the North",
                players="2-4",
                age=14,
                minutes=90,
                mul=1.8,
                detail="Heavy economic train game with share trading.",
            ),
        ),
    ),
    Template(
        "{brand} {pieces}-Piece Jigsaw Puzzle: {scene}",
        "Thick blue-board pieces with a linen finish and a reference poster; finished size {size}.",
        (16, 22),
        ("jigsaw puzzle", "puzzle", "gift"),
        ("Brightbox Games", "Quiet Hours"),
        (
            v(pieces=1000, scene="Alpine Lake at Dawn", size="27 x 20 in", mul=1.0),
            v(pieces=500, scene="Vintage Camera Collection", size="21 x 15 in", mul=0.8),
            v(pieces=1500, scene="Tokyo Night Market", size="33 x 23 in", mul=1.3),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (19, 59),
        ("building set", "stem", "kids", "gift"),
        ("Bricksmith", "Tinkerlab"),
        (
            v(
                item="Botanical Flower Bouquet Building Set",
                mul=1.4,
                detail="756 pieces that build a display bouquet; an adult-friendly build.",
            ),
            v(
                item="Coding Robot Kit for Kids",
                mul=2.5,
                detail="Snap-together robot programmed with drag-and-drop blocks, ages 8+.",
            ),
            v(
                item="Magnetic Tiles 60-Piece Set",
                mul=1.5,
                detail="Translucent magnetic shapes for open-ended building, ages 3+.",
            ),
            v(
                item="Marble Run Construction Kit",
                mul=1.2,
                detail="120 pieces including a spiral and trampolines.",
            ),
            v(
                item="Kids Digital Camera",
                mul=1.0,
                detail="Shockproof 1080p camera with a selfie lens and 32 GB card, ages 4+.",
            ),
        ),
    ),
    Template(
        "{brand} {item}",
        "{detail}",
        (14, 29),
        ("toy", "kids", "gift"),
        ("Tinkerlab", "Little Acorn", "Brightbox Games"),
        (
            v(
                item="Plush Red Panda 12-Inch",
                mul=1.0,
                detail="Super-soft, machine-washable plush made from recycled fibres.",
            ),
            v(
                item="Wooden Train Set 50-Piece",
                mul=2.0,
                detail="Beech track, bridge and magnetic carriages compatible with major brands.",
            ),
            v(
                item="Card Game: Pocket Dragons",
                mul=0.6,
                detail="Fast set-collection card game for 2-6 players, ages 7+.",
            ),
            v(
                item="Remote Control Stunt Car",
                mul=1.5,
                detail="Flips, spins and drives on both sides; rechargeable battery.",
            ),
        ),
    ),
)

BOOKS: tuple[Template, ...] = (
    Template(
        "{title} ({fmt}) by {author}",
        "{blurb}",
        (14, 24),
        ("book",),
        # For books the "brands" are formats; the publisher becomes the brand (see generate).
        ("Paperback", "Hardcover", "Kindle Edition"),
        (
            v(
                title="Understanding Light: A Photographer's Field Guide",
                author="Maya Ortega",
                mul=1.3,
                topic="photography",
                blurb="Practical lessons on natural and artificial light; 200 annotated photos.",
            ),
            v(
                title="The Street Photography Handbook",
                author="Jonah Reyes",
                mul=1.6,
                topic="photography",
                blurb="Candid techniques, ethics and composition drills from 20 years of shooting.",
            ),
            v(
                title="Mountains in Monochrome: A Photo Book",
                author="Ingrid Halvorsen",
                mul=2.4,
                topic="photography",
                blurb="Large-format black-and-white landscapes printed on heavyweight matte paper.",
            ),
            v(
                title="Composition for Photographers",
                author="Sam Whitlock",
                mul=1.1,
                topic="photography",
                blurb="Rules, when to break them, and exercises to train your eye.",
            ),
            v(
                title="Film Is Not Dead: Shooting Analog Today",
                author="Noor Kassim",
                mul=1.2,
                topic="photography",
                blurb="Choosing cameras and stocks, home developing and scanning, step by step.",
            ),
            v(
                title="Run Smarter: Training Plans from 5K to Marathon",
                author="Elena Brooks",
                mul=1.0,
                topic="running",
                blurb="Periodised plans, strength routines and injury prevention for every level.",
            ),
            v(
                title="The Home Barista",
                author="Luca Ferri",
                mul=1.5,
                topic="coffee",
                blurb="Dialling in espresso, milk texture and latte art at home.",
            ),
            v(
                title="Deep Work Habits",
                author="Priya Natarajan",
                mul=0.9,
                topic="productivity",
                blurb="A research-based guide to focus, routines and a distraction-free desk.",
            ),
            v(
                title="The Quiet Orchard",
                author="Clara Winslow",
                mul=0.9,
                topic="fiction",
                blurb="A literary novel about three sisters and a failing farm.",
            ),
            v(
                title="Signal Lost",
                author="Marcus Vell",
                mul=1.4,
                topic="science fiction",
                blurb="A deep-space thriller about a crew that receives its own distress call.",
            ),
            v(
                title="Weeknight Vegetables",
                author="Hana Sato",
                mul=1.6,
                topic="cookbook",
                blurb="100 fast vegetable-forward recipes for busy evenings.",
            ),
            v(
                title="Trails of the Pacific Crest",
                author="Dev Anand",
                mul=1.3,
                topic="travel",
                blurb="Section-by-section guide with maps and resupply notes.",
            ),
            v(
                title="Python for Curious Minds",
                author="Ada Lindqvist",
                mul=2.0,
                topic="programming",
                blurb="A friendly introduction to programming through small, playful projects.",
            ),
            v(
                title="Little Fox Finds the Moon",
                author="Rosa Pell",
                mul=0.5,
                topic="children",
                blurb="A bedtime picture book for ages 1-4.",
            ),
            v(
                title="Birds of the Backyard: A Photographic Guide",
                author="Tomas Greer",
                mul=1.4,
                topic="photography",
                blurb="Identify 300 common birds, with tips for photographing them at feeders.",
            ),
            v(
                title="The Lens Cap Diaries",
                author="Beatrix Hale",
                mul=1.0,
                topic="memoir",
                blurb="A war photographer's memoir of forty years behind the viewfinder.",
            ),
            v(
                title="Brewed Awakening: A History of Coffee",
                author="Omar Haddad",
                mul=1.1,
                topic="history",
                blurb="From Ethiopian highlands to third-wave cafes.",
            ),
        ),
    ),
)

PUBLISHERS = ("Harbour Press", "Fieldnote Books", "Lantern House")
FORMAT_PRICE = {"Paperback": 1.0, "Hardcover": 1.7, "Kindle Edition": 0.6}

CATEGORIES: dict[str, tuple[str, tuple[Template, ...]]] = {
    "cameras-photography": ("cam", CAMERAS),
    "running-fitness": ("run", RUNNING),
    "coffee-kitchen": ("kit", COFFEE),
    "home-office": ("off", HOME_OFFICE),
    "laptops-electronics": ("elc", LAPTOPS),
    "outdoor": ("out", OUTDOOR),
    "beauty": ("bty", BEAUTY),
    "toys-games": ("toy", TOYS),
    "books": ("bk", BOOKS),
}


def _price(rng: random.Random, band: tuple[float, float], mul: float) -> float:
    """Retail-looking price: scaled band value ending in .99/.95/.00 (illustrative only)."""
    raw = rng.uniform(*band) * mul * rng.uniform(0.9, 1.12)
    ending = rng.choice((0.99, 0.99, 0.99, 0.95, 0.0))
    whole = max(int(raw), 1)
    if raw >= 200:  # pricier items are usually priced in round tens
        whole = int(round(raw / 10.0) * 10) - (1 if ending else 0)
        return float(whole) + (ending or 0.0)
    return round(whole + ending, 2)


def _rating(rng: random.Random) -> float | None:
    if rng.random() < UNRATED_SHARE:
        return None
    return round(min(5.0, max(2.8, rng.gauss(4.35, 0.35))), 1)


def generate(seed: int = SEED) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    products: list[dict[str, Any]] = []
    for category, (prefix, templates) in CATEGORIES.items():
        number = 0
        for template in templates:
            for index, variant in enumerate(template.variants):
                for brand in template.brands:
                    number += 1
                    slots = {"brand": brand, **variant}
                    mul = float(variant.get("mul", 1.0))
                    if category == "books":
                        # Books come in formats and have one publisher, stored as the brand.
                        slots["fmt"] = brand
                        mul *= FORMAT_PRICE[brand]
                        brand = PUBLISHERS[index % len(PUBLISHERS)]
                    tags = list(template.tags)
                    if "topic" in variant:
                        tags.append(variant["topic"])
                    title = template.title.format(**slots)
                    description = template.description.format(**slots)
                    if category == "books":
                        description += f" Published by {brand}."
                    product: dict[str, Any] = {
                        "id": f"{prefix}-{number:03d}",
                        "title": title,
                        "description": description,
                        "category": category,
                        "price": _price(rng, template.price, mul),
                        "rating": _rating(rng),
                        "brand": brand,
                        "tags": tags,
                        "options": template.options,
                    }
                    products.append(product)
    titles = [p["title"] for p in products]
    duplicates = {t for t in titles if titles.count(t) > 1}
    if duplicates:
        raise SystemExit(f"duplicate titles in templates: {sorted(duplicates)[:5]}")
    return products


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    products = generate(args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="\n") as handle:
        for product in products:
            handle.write(json.dumps(product, ensure_ascii=False, sort_keys=False) + "\n")
    print(f"wrote {len(products)} products to {args.out}")


if __name__ == "__main__":
    main()
