"""ISO 4217 list one (published 2026-01-01): every current currency code and its minor-unit digits.

Data only. Codes whose minor unit ISO gives as "N.A." (precious metals, bond-market units, the
SDR, the test code XTS and "no currency" XXX) are listed apart: nothing is paid out in them.
Withdrawn codes (HRK, ANG, SLL, ZWL, ...) are not listed. When ISO amends the list, edit it here.
"""

from __future__ import annotations

from types import MappingProxyType

_BY_DIGITS = {
    0: "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF",
    2: """
        AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD
        CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS
        GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD
        LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB
        PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP
        SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XAD XCD XCG YER ZAR ZMW
        ZWG
    """,
    3: "BHD IQD JOD KWD LYD OMR TND",
    4: "CLF UYW",
}

MINOR_DIGITS: MappingProxyType[str, int] = MappingProxyType(
    {code: digits for digits, codes in _BY_DIGITS.items() for code in codes.split()}
)
"""Currency code -> number of minor-unit digits (JPY 0, EUR 2, KWD 3, CLF 4)."""

_NO_MINOR_UNIT = "XAG XAU XBA XBB XBC XBD XDR XPD XPT XSU XTS XUA XXX"

WITHOUT_MINOR_UNIT: frozenset[str] = frozenset(_NO_MINOR_UNIT.split())
"""ISO 4217 codes that are not amounts of money in minor units."""
