"""The sandbox's state machine: tokens, bank accounts, payouts, sessions and a queue of due events.

Everything that happens later (a payout settling, a 14.01 return, a session expiring, a callback
attempt) is an event on one heap ordered by sandbox time. :meth:`Sandbox.process_due` runs every
event whose time has come, in time order, and events use their own due time as "when", so
advancing the clock by an hour gives the same timestamps as waiting an hour.

The demo drives it in-process: ``sandbox.clock.advance(s)`` then ``await sandbox.process_due()``
(or ``await sandbox.advance(s)``). The bank-side actions of the admin routes (confirmations,
returns, answer overrides, notifications on demand) live in :mod:`recon.sandbox.bankside`; the
fee's price in :mod:`recon.sandbox.fees`; the export's window, rows and task in
:mod:`recon.sandbox.exports`.

Every record belongs to one merchant (an account: its own keys and token), and a token only ever
reaches its own merchant's records: another merchant's id is answered as an unknown one.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import secrets
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from recon.constants import TxState, TxType
from recon.money import minor_digits, normalise_currency, to_minor
from recon.provider.models import (
    STATEMENT_REFERENCE_FORBIDDEN_COUNTRIES,
    BankAccountCreateRequest,
    BankAccountSelectionRequest,
    CallbackSubscription,
    WithdrawalRequest,
)
from recon.sandbox import exports, scenarios
from recon.sandbox.bankside import BankSide
from recon.sandbox.callbacks import CallbackDispatcher
from recon.sandbox.clock import SandboxClock
from recon.sandbox.config import Merchant, SandboxConfig
from recon.sandbox.errors import SandboxError, invalid, refused, unauthorized
from recon.sandbox.faults import FaultInjector
from recon.sandbox.fees import fee_for
from recon.sandbox.records import (
    AccountRecord,
    MovementRecord,
    SessionRecord,
    TxRecord,
    currency_for_country,
    epoch,
    fake_iban,
    new_id,
)

Action = Callable[[float], Awaitable[None]]

# ``transaction.get`` asked with a session's id (provider-notes: "answers an error saying a
# session was found with that id"; the transaction id is then read with ``session.get``).
SESSION_FOUND = "session_found"
SESSION_FOUND_MESSAGE = "a session was found with that id; read its transaction_id with session.get"


def _subscriptions(callbacks: list[CallbackSubscription], session: bool) -> dict[int, list[str]]:
    by_state: dict[int, list[str]] = {}
    for cb in callbacks:
        state = cb.session_state if session else cb.transaction_state
        if state is not None:
            by_state.setdefault(state, []).append(cb.url)
    return by_state


class Sandbox(BankSide):
    """The simulated provider: one instance per app (``app.state.sandbox``)."""

    def __init__(self, config: SandboxConfig | None = None, clock: SandboxClock | None = None):
        self.config = config or SandboxConfig()
        self.clock = clock or SandboxClock()
        self.faults = FaultInjector(self.config.faults)
        self._by_key = {m.public_key: m for m in self.config.merchants}
        self._by_id = {m.merchant_id: m for m in self.config.merchants}
        self._tokens: dict[str, tuple[Merchant, float]] = {}
        self.accounts: dict[str, AccountRecord] = {}
        self.transactions: dict[str, TxRecord] = {}
        self.sessions: dict[str, SessionRecord] = {}
        self.movements: list[MovementRecord] = []
        self.export_tasks: dict[str, exports.ExportTask] = {}
        self._artifacts: dict[str, exports.ExportTask] = {}  # by the artifact url's token
        self._references: dict[tuple[str, str], str] = {}
        self._events: list[tuple[float, int, Action]] = []
        self._seq = itertools.count()
        self._lock = asyncio.Lock()
        self.wakeup = asyncio.Event()
        self.dispatcher = CallbackDispatcher(
            self.schedule, self.config.callback_transport, self.config.callback_timeout_seconds
        )

    def _now(self) -> float:
        # Whole milliseconds (rounded down, never ahead of the clock), so "created + 60" and the
        # eta encode to the same JSON number.
        return math.floor(self.clock.now() * 1000) / 1000

    # --- events ---------------------------------------------------------------------------------

    def schedule(self, due: float, action: Action) -> None:
        """Run ``action(due)`` once the sandbox clock reaches ``due``."""
        heapq.heappush(self._events, (due, next(self._seq), action))
        self.wakeup.set()

    async def process_due(self) -> int:
        """Run every event that is due, oldest first (including those they schedule); count them."""
        done = 0
        async with self._lock:
            # The tolerance absorbs float noise of the millisecond rounding in _now().
            while self._events and self._events[0][0] <= self.clock.now() + 1e-6:
                due, _, action = heapq.heappop(self._events)
                await action(due)
                done += 1
        return done

    async def advance(self, seconds: float) -> int:
        """Move the clock forward and process everything that became due."""
        self.clock.advance(seconds)
        return await self.process_due()

    @property
    def next_due(self) -> float | None:
        """Sandbox time of the next event, if any."""
        return self._events[0][0] if self._events else None

    # --- accounts (merchants) --------------------------------------------------------------------

    @property
    def merchants(self) -> list[Merchant]:
        """Every account the sandbox serves, in the order they were added."""
        return list(self._by_id.values())

    def merchant(self, merchant_id: str) -> Merchant:
        """The account named ``merchant_id``, or 404 ``account_not_found``."""
        found = self._by_id.get(merchant_id)
        if found is None:
            raise SandboxError(404, "account_not_found", f"no account named {merchant_id!r}")
        return found

    def add_merchant(self, merchant: Merchant) -> Merchant:
        """Serve one more account from now on (409 ``account_exists`` if its name or key is
        taken)."""
        if merchant.merchant_id in self._by_id:
            raise SandboxError(
                409, "account_exists", f"an account named {merchant.merchant_id!r} exists"
            )
        if merchant.public_key in self._by_key:
            raise SandboxError(409, "account_exists", "another account has that public_key")
        self._by_id[merchant.merchant_id] = merchant
        self._by_key[merchant.public_key] = merchant
        return merchant

    def book_movement(
        self,
        merchant: Merchant,
        kind: str,
        amount: Decimal,
        currency: str,
        settled: float | None = None,
        merchant_reference: str | None = None,
    ) -> MovementRecord:
        """A top-up or merchant withdrawal of ``merchant``, settled at ``settled`` (default now)."""
        if kind not in exports.MOVEMENTS:
            raise invalid(f"kind: must be one of {', '.join(exports.MOVEMENTS)}")
        now = self._now()
        movement = MovementRecord(
            id=new_id(),
            merchant_id=merchant.merchant_id,
            kind=kind,
            amount=amount,
            currency=currency,
            settled=now if settled is None else settled,
            created=now,
            merchant_reference=merchant_reference,
        )
        self.movements.append(movement)
        return movement

    # --- authorisation --------------------------------------------------------------------------

    def authorize(self, public_key: str, secret: str) -> dict[str, Any]:
        """A new token for the merchant with these keys (every call makes a new one)."""
        merchant = self._by_key.get(public_key)
        if merchant is None or not secrets.compare_digest(
            merchant.secret.get_secret_value().encode(), secret.encode()
        ):
            raise unauthorized("unknown public_key or wrong secret")
        now = self._now()
        self._tokens = {t: v for t, v in self._tokens.items() if v[1] > now}
        lifetime = self.faults.config.token_lifetime_seconds or self.config.token_lifetime_seconds
        token = secrets.token_hex(32)
        self._tokens[token] = (merchant, now + lifetime)
        return {
            "access_token": token,
            "expires": epoch(now + lifetime),
            "refresh_token": secrets.token_hex(32),
        }

    def merchant_for(self, authorization: str | None) -> Merchant:
        """The merchant of a ``Bearer`` header, or a 401 (missing, unknown or expired token)."""
        if not authorization or not authorization.startswith("Bearer "):
            raise unauthorized("missing bearer token")
        entry = self._tokens.get(authorization[7:].strip())
        if entry is None:
            raise unauthorized("unknown access token")
        if entry[1] <= self.clock.now():
            raise unauthorized("access token expired")
        return entry[0]

    # --- bank accounts --------------------------------------------------------------------------

    def create_account(self, merchant: Merchant, req: BankAccountCreateRequest) -> dict[str, Any]:
        """``bank_account.create``: store the account, answer its id."""
        iban = req.iban.replace(" ", "").upper()
        holder = " ".join(p for p in (req.holder_firstname, req.holder_lastname) if p)
        account = AccountRecord(new_id(), merchant.merchant_id, req.country_id, iban, holder)
        self.accounts[account.id] = account
        return {"id": account.id}

    # --- payouts --------------------------------------------------------------------------------

    def create_withdrawal(
        self, merchant: Merchant, req: WithdrawalRequest, currency_id: Any = None
    ) -> dict[str, Any]:
        """``transaction.create_withdrawal`` with the rules of 4.6, 4.6.1 and the amounts of 7.3."""
        key = (merchant.merchant_id, req.merchant_reference)
        if key in self._references:
            earlier = self.transactions[self._references[key]]
            if earlier.amount != req.amount:
                raise SandboxError(
                    409,
                    "merchant_reference_conflict",
                    f"merchant_reference {req.merchant_reference!r} was used with another amount",
                )
            return {"id": earlier.id, "eta": epoch(earlier.eta)}
        account = self.accounts.get(req.bank_account_id)
        if account is None or account.merchant_id != merchant.merchant_id:
            raise invalid(f"bank_account_id: unknown bank account {req.bank_account_id!r}")
        if (
            req.statement_reference is not None
            and account.country_id in STATEMENT_REFERENCE_FORBIDDEN_COUNTRIES
        ):
            raise SandboxError(
                400,
                "statement_reference_not_allowed",
                f"statement_reference must not be sent for payouts to {account.country_id}",
            )
        currency = self._currency(merchant, account, currency_id)
        try:
            to_minor(req.amount, currency)
        except ValueError:
            raise invalid(
                f"amount: {req.amount} has more than {minor_digits(currency)} decimals"
                f" for {currency}"
            ) from None

        behaviour = scenarios.payout_behaviour(req.amount)
        now = self._now()
        settle_at = now + (
            scenarios.DELAY_SECONDS if behaviour.delayed else self.config.settle_after_seconds
        )
        tx = TxRecord(
            id=new_id(),
            merchant_id=merchant.merchant_id,
            type=int(TxType.PAYOUT),
            state=int(behaviour.initial_state),
            amount=req.amount,
            currency=currency,
            created=now,
            eta=now
            + self.config.settle_after_seconds
            + (scenarios.DELAY_SECONDS if behaviour.delayed else 0.0),
            merchant_reference=req.merchant_reference,
            account=account,
            statement_reference=req.statement_reference,
            customer_id=_optional_str(req, "customer_id"),
            error_code=behaviour.error_code,
            callbacks=_subscriptions(req.callbacks, session=False),
            fee_factor=behaviour.fee_factor,
        )
        if behaviour.fee_at_creation:
            self._charge_fee(tx, now)
        if tx.state == TxState.COMPLETED:
            tx.completed = now
        self.transactions[tx.id] = tx
        self._references[key] = tx.id
        self._notify_tx(tx, now)
        if tx.state == TxState.COMPLETED:
            self.schedule(settle_at, lambda at: self._settle(tx, at, behaviour.returned))
        return {"id": tx.id, "eta": epoch(tx.eta)}

    def _currency(self, merchant: Merchant, account: AccountRecord, given: Any) -> str:
        if given is None:
            return currency_for_country(account.country_id, merchant.default_currency)
        if not isinstance(given, str):
            raise invalid("currency_id: must be a string such as 'EUR'")
        try:
            return normalise_currency(given)
        except ValueError as exc:
            raise invalid(f"currency_id: {exc}") from None

    def _charge_fee(self, tx: TxRecord, at: float) -> None:
        """The provider takes its fee on this payout (once: a later settling keeps it)."""
        tx.fee_amount = fee_for(self.config.fee, tx.amount, tx.currency, factor=tx.fee_factor)
        tx.fee_id = new_id()
        tx.fee_charged = at
        tx.touch()

    async def _settle(self, tx: TxRecord, at: float, then_return: bool) -> None:
        tx.state = int(TxState.SETTLED)
        tx.settled = at
        if tx.error_code == scenarios.DELAYED_IN_BANK:
            tx.error_code = None
        if tx.fee_id is None:
            self._charge_fee(tx, at)
        tx.touch()
        self._notify_tx(tx, at)
        if then_return:

            async def auto_return(when: float) -> None:
                self._return(tx, tx.amount, when)

            self.schedule(at + scenarios.RETURN_AFTER_SECONDS, auto_return)

    def _notify_tx(self, tx: TxRecord, at: float) -> None:
        body = {
            "merchant_id": tx.merchant_id,
            "transaction_id": tx.id,
            "transaction_state": tx.state,
        }
        for url in tx.callbacks.get(tx.state, ()):
            self.dispatcher.notify("transaction", url, body, at)

    def transaction_answer(self, merchant: Merchant, tx_id: str) -> bytes:
        """The encoded ``transaction.get`` answer (the hot path: a dict lookup and cached bytes)."""
        tx = self.transactions.get(tx_id)
        if tx is None or tx.merchant_id != merchant.merchant_id:
            session = self.sessions.get(tx_id)
            if session is not None and session.merchant_id == merchant.merchant_id:
                raise SandboxError(404, SESSION_FOUND, SESSION_FOUND_MESSAGE)
            raise SandboxError(404, "transaction_not_found", f"no transaction with id {tx_id!r}")
        if tx.refused_status is not None:
            raise refused(tx.refused_status)
        return tx.answer()

    # --- the transaction export ------------------------------------------------------------------

    def request_export(self, merchant: Merchant, data: dict[str, Any]) -> dict[str, Any]:
        """``transaction.csv_export``: a task for the window the body asks for; its id."""
        task = exports.ExportTask(
            id=new_id(),
            merchant_id=merchant.merchant_id,
            window=exports.window_of(data),
            created=self._now(),
            fails=self.faults.export_fails(),
        )
        self.export_tasks[task.id] = task
        return {"id": task.id}

    def export_task(self, merchant: Merchant, task_id: str, base_url: str) -> dict[str, Any]:
        """``export_task.get``: one step of the task (:mod:`recon.sandbox.exports`); the ask that
        finds it done makes its file, of the rows settled in its window by then."""
        task = self.export_tasks.get(task_id)
        if task is None or task.merchant_id != merchant.merchant_id:
            raise SandboxError(404, "export_task_not_found", f"no export task with id {task_id!r}")
        now = self._now()
        state = task.ask(now)
        if state == exports.TaskState.DONE and task.token is None:
            rows = exports.rows_of(
                task.merchant_id,
                task.window,
                self.transactions.values(),
                self.movements,
                self.config.export_cap,
            )
            task.content = exports.render(rows)
            task.rows = len(rows)
            task.token = secrets.token_urlsafe(32)
            task.expires = now + exports.ARTIFACT_LIFETIME_SECONDS
            self._artifacts[task.token] = task

            async def expire(_: float) -> None:
                task.content = None  # the provider deletes the file

            self.schedule(task.expires, expire)
        return task.answer(state, base_url)

    def artifact(self, token: str) -> bytes:
        """The file behind an artifact url: 404 if unknown, 410 once expired."""
        task = self._artifacts.get(token)
        if task is None:
            raise SandboxError(404, "artifact_not_found", "no export file at this url")
        assert task.expires is not None
        if self.clock.now() >= task.expires:
            task.content = None
        if task.content is None:
            raise SandboxError(410, "artifact_expired", "this export file has been deleted")
        return task.content

    # --- sessions -------------------------------------------------------------------------------

    def create_session(
        self, merchant: Merchant, req: BankAccountSelectionRequest
    ) -> dict[str, Any]:
        """``session.create_bank_account_selection``: a pending session that expires in 30 min."""
        now = self._now()
        session = SessionRecord(
            id=new_id(),
            merchant_id=merchant.merchant_id,
            token=secrets.token_urlsafe(24),
            created=now,
            country_id=req.country_id,
            merchant_reference=req.merchant_reference,
            redirect_uri=req.redirect_uri,
            brand_name=req.brand_name,
            locale=req.locale,
            customer_id=_optional_str(req, "customer_id"),
            callbacks=_subscriptions(req.callbacks, session=True),
        )
        self.sessions[session.id] = session

        async def expire(at: float) -> None:
            if not session.finished:
                self._end_session(session, 10, scenarios.EXPIRED_SESSION, at)

        self.schedule(now + scenarios.SESSION_LIFETIME_SECONDS, expire)
        return {"id": session.id, "url": self.hosted_url(session), "token": session.token}

    def hosted_url(self, session: SessionRecord) -> str:
        return f"{self.config.base_url.rstrip('/')}/hosted/{session.id}"

    def get_session(self, merchant: Merchant, session_id: str) -> SessionRecord:
        session = self.sessions.get(session_id)
        if session is None or session.merchant_id != merchant.merchant_id:
            raise SandboxError(404, "session_not_found", f"no session with id {session_id!r}")
        return session

    def finish_session(self, session: SessionRecord, scenario_key: str) -> SessionRecord:
        """The customer's choice on the hosted page ends the session (see ``scenarios``)."""
        scenario = scenarios.SCENARIO_BY_KEY.get(scenario_key)
        if scenario is None:
            raise invalid(f"scenario: unknown scenario {scenario_key!r}")
        if session.finished:
            raise SandboxError(409, "session_finished", "this session has already ended")
        if scenario.error_code is None:
            country = session.country_id or "FI"
            account = AccountRecord(
                new_id(), session.merchant_id, country, fake_iban(country), "Test Customer"
            )
            self.accounts[account.id] = account
            session.account = account
        self._end_session(session, int(scenario.state), scenario.error_code, self._now())
        return session

    def _end_session(
        self, session: SessionRecord, state: int, error_code: str | None, at: float
    ) -> None:
        session.state = state
        session.error_code = error_code
        session.ended = at
        body = {
            "merchant_id": session.merchant_id,
            "session_id": session.id,
            "session_state": state,
        }
        for url in session.callbacks.get(state, ()):
            self.dispatcher.notify("session", url, body, at)

    async def aclose(self) -> None:
        """Release the callback client."""
        await self.dispatcher.aclose()


def _optional_str(model: Any, name: str) -> str | None:
    # customer_id is accepted as an extra field of the request models (extra="allow").
    value = (model.model_extra or {}).get(name)
    return value if isinstance(value, str) else None
