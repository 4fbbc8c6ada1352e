"""Bank-side actions and provider misbehaviour, played through the admin routes (``admin``).

What the interface allows but does not promise: a bank confirming a failed payout days later
(3.3), a settled payout failed or aborted after all (a reversal), returns of any number, size,
currency and payout state, notifications suppressed or claiming another amount, answers that
differ from the record, a session naming a payout, and transaction notifications on demand.
:class:`BankSide` is mixed into :class:`recon.sandbox.engine.Sandbox`; nothing here is on the
``transaction.get`` path.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from recon.constants import SessionState, TxState, TxType
from recon.money import minor_digits, normalise_currency, to_minor
from recon.sandbox.errors import SandboxError, invalid
from recon.sandbox.records import SessionRecord, TxRecord, new_id

if TYPE_CHECKING:
    from recon.sandbox.callbacks import CallbackDispatcher
    from recon.sandbox.config import Merchant, SandboxConfig


class BankSide:
    """The admin actions of the sandbox (a mixin of ``Sandbox``, which owns the state)."""

    if TYPE_CHECKING:
        config: SandboxConfig
        transactions: dict[str, TxRecord]
        sessions: dict[str, SessionRecord]
        dispatcher: CallbackDispatcher
        _by_id: dict[str, Merchant]

        def _now(self) -> float: ...
        def schedule(self, due: float, action: Callable[[float], Awaitable[None]]) -> None: ...
        def _notify_tx(self, tx: TxRecord, at: float) -> None: ...
        async def _settle(self, tx: TxRecord, at: float, then_return: bool) -> None: ...

    # --- bank-side admin actions ----------------------------------------------------------------

    def _return(
        self,
        payout: TxRecord,
        amount: Decimal,
        at: float,
        *,
        currency: str | None = None,
        notify: bool = True,
        notified_amount: Decimal | None = None,
    ) -> TxRecord:
        """The receiving bank returns a payout: a type-13 transaction and a notification."""
        returned = TxRecord(
            id=new_id(),
            merchant_id=payout.merchant_id,
            type=int(TxType.RETURNED_FUNDS),
            state=int(TxState.SETTLED),
            amount=amount,
            currency=currency or payout.currency,
            created=at,
            completed=at,
            settled=at,
            account=payout.account,
            customer_id=payout.customer_id,
            related_transaction_id=payout.id,
            original_transaction_id=payout.id,
        )
        self.transactions[returned.id] = returned
        payout.returns.append(returned.id)
        payout.related_transaction_id = returned.id  # one field: it names the latest return
        payout.touch()
        merchant = self._by_id[payout.merchant_id]
        body = {
            "transaction_id": returned.id,
            "original_transaction_id": payout.id,
            "notification_type": "RETURNED_TRANSACTION",
            "merchant_id": payout.merchant_id,
            "country_id": payout.account.country_id if payout.account else None,
            "amount": amount if notified_amount is None else notified_amount,
        }
        if notify:
            self.dispatcher.notify("returned_funds", merchant.returned_funds_url, body, at)
        else:
            self.dispatcher.suppressed("returned_funds", body, at)
        return returned

    def _payout(self, tx_id: str) -> TxRecord:
        tx = self._transaction(tx_id)
        if tx.type != TxType.PAYOUT:
            raise SandboxError(409, "invalid_state", "only payouts (type 1) can be changed")
        return tx

    def confirm(self, tx_id: str, after_seconds: float = 0.0) -> TxRecord:
        """3.3: the bank confirms a payout it had labelled aborted or failed: 5 now, 6 later.

        With ``after_seconds`` the confirmation happens that much later on the sandbox clock (if
        the payout is still aborted or failed then), stamped with that time.
        """
        tx = self._payout(tx_id)
        _check_confirmable(tx)
        if after_seconds > 0:

            async def later(at: float) -> None:
                if tx.state in (TxState.ABORTED, TxState.FAILED):
                    self._confirm(tx, at)

            self.schedule(self._now() + after_seconds, later)
        else:
            self._confirm(tx, self._now())
        return tx

    def _confirm(self, tx: TxRecord, at: float) -> None:
        tx.state = int(TxState.CREDIT)
        tx.credited = at
        tx.touch()
        self._notify_tx(tx, at)
        self.schedule(
            at + self.config.settle_after_seconds, lambda due: self._settle(tx, due, False)
        )

    def reverse(
        self, tx_id: str, state: int = TxState.FAILED, error_code: str | None = None
    ) -> TxRecord:
        """A settled payout turns failed (3) or aborted (2) after all: the bank recalls it.

        The interface does not promise that a settled payout stays settled; this plays the
        reversal a reconciliation must not mistake for an ordinary failure. A transaction
        notification goes to the urls the payout subscribed for the new state.
        """
        tx = self._payout(tx_id)
        if tx.state != TxState.SETTLED:
            raise SandboxError(409, "invalid_state", f"payout is in state {tx.state}, not 6")
        if state not in (TxState.ABORTED, TxState.FAILED):
            raise invalid("state: must be 2 (aborted) or 3 (failed)")
        now = self._now()
        tx.state = int(state)
        tx.error_code = error_code
        tx.touch()
        self._notify_tx(tx, now)
        return tx

    def return_funds(
        self,
        tx_id: str,
        amount: Decimal | None = None,
        *,
        currency: str | None = None,
        notify: bool = True,
        notified_amount: Decimal | None = None,
        any_state: bool = False,
        after_seconds: float = 0.0,
    ) -> TxRecord | None:
        """3.3: the receiving bank returns a settled payout (all of it unless ``amount``).

        A payout can be returned any number of times, by any positive amount (more than the
        payout too), in another ``currency``; ``notify=False`` sends no notification (only
        polling finds the return); ``notified_amount`` is the amount the notification claims;
        ``any_state`` allows a return on a payout that is not settled. With ``after_seconds`` the
        return happens that much later (``None`` is answered); otherwise the new type-13 record.
        """
        tx = self._payout(tx_id)
        if not any_state and tx.state != TxState.SETTLED:
            raise SandboxError(409, "invalid_state", f"payout is in state {tx.state}, not 6")
        currency = tx.currency if currency is None else self._return_currency(currency)
        amount = tx.amount if amount is None else amount
        if not amount > 0:
            raise invalid("amount: must be above 0")
        try:
            to_minor(amount, currency)
        except ValueError:
            raise invalid(
                f"amount: {amount} has more than {minor_digits(currency)} decimals for {currency}"
            ) from None

        def play(at: float) -> TxRecord:
            return self._return(
                tx, amount, at, currency=currency, notify=notify, notified_amount=notified_amount
            )

        if after_seconds > 0:

            async def later(at: float) -> None:
                play(at)

            self.schedule(self._now() + after_seconds, later)
            return None
        return play(self._now())

    def change_return(
        self, tx_id: str, amount: Decimal | None = None, *, gone: bool = False
    ) -> TxRecord:
        """A returned-funds transaction changes after the fact: ``amount`` is what
        ``transaction.get`` answers from now on, or ``gone`` makes it unknown (404) and its payout
        no longer names it (``related_transaction_id``: the latest return left, if any)."""
        tx = self._transaction(tx_id)
        if tx.type != TxType.RETURNED_FUNDS:
            raise SandboxError(409, "invalid_state", "only returned funds (type 13) can change")
        if gone == (amount is not None):
            raise invalid("give either amount or gone")
        if gone:
            del self.transactions[tx.id]
            payout = self.transactions.get(tx.related_transaction_id or "")
            if payout is not None and tx.id in payout.returns:
                payout.returns.remove(tx.id)
                payout.related_transaction_id = payout.returns[-1] if payout.returns else None
                payout.touch()
            return tx
        assert amount is not None
        if not amount > 0:
            raise invalid("amount: must be above 0")
        try:
            to_minor(amount, tx.currency)
        except ValueError:
            raise invalid(f"amount: {amount} does not fit {tx.currency}") from None
        tx.amount = amount
        tx.touch()
        return tx

    @staticmethod
    def _return_currency(given: str) -> str:
        try:
            return normalise_currency(given)
        except ValueError as exc:
            raise invalid(f"currency: {exc}") from None

    # --- answers that differ from the record (the provider misbehaving) -------------------------

    def override_answer(
        self, tx_id: str, fields: dict[str, Any] | None = None, answer_of: str | None = None
    ) -> TxRecord:
        """Make ``transaction.get`` of ``tx_id`` answer differently until the next override.

        ``fields`` replace fields of the answer (``{"state": "STATE_REFUNDED"}``,
        ``{"merchant_reference": "other"}``); ``answer_of`` answers with that transaction's answer
        instead (its ``id`` is not the id asked for). Each call replaces the previous override;
        neither given clears it. The record underneath keeps changing as usual.
        """
        tx = self._transaction(tx_id)
        other = None if answer_of is None else self._transaction(answer_of)
        if other is tx:
            raise invalid("answer_of: must be another transaction")
        tx.overrides = dict(fields or {})
        tx.answer_as = other
        tx.touch()
        return tx

    def refuse(self, tx_id: str, status: int | None = 403) -> TxRecord:
        """Make ``transaction.get`` of ``tx_id`` answer ``status`` (401 or 403) to its own
        merchant, whatever the token, as a provider refusing that id to this merchant account
        does; ``None`` answers it again. Other ids and tokens are untouched."""
        if status not in (401, 403, None):
            raise invalid("status: must be 401, 403 or null (answer again)")
        tx = self._transaction(tx_id)
        tx.refused_status = status
        return tx

    def notify_transaction(
        self, tx_id: str, state: int | None = None, url: str | None = None
    ) -> list[str]:
        """Send a transaction notification (6.3) for ``tx_id`` now; the urls it goes to.

        ``state`` is what the notification claims (default: the transaction's state; the sandbox
        does not check it). ``url`` defaults to the urls the payout subscribed for that state,
        else the merchant's ``callback_url``.
        """
        tx = self._transaction(tx_id)
        claimed = tx.state if state is None else state
        urls = [url] if url else list(tx.callbacks.get(claimed, ()))
        merchant = self._by_id[tx.merchant_id]
        if not urls and merchant.callback_url:
            urls = [merchant.callback_url]
        if not urls:
            raise SandboxError(
                409,
                "no_callback_url",
                f"no url: the payout subscribed none for state {claimed}, the merchant has no "
                "callback_url, and none was given",
            )
        body = {
            "merchant_id": tx.merchant_id,
            "transaction_id": tx.id,
            "transaction_state": claimed,
        }
        now = self._now()
        for target in urls:
            self.dispatcher.notify("transaction", target, body, now)
        return urls

    def session_for(self, tx_id: str) -> SessionRecord:
        """A completed session whose ``transaction_id`` is this payout (its ``session_id``)."""
        tx = self._payout(tx_id)
        if tx.session_id is not None:
            return self.sessions[tx.session_id]
        now = self._now()
        country = tx.account.country_id if tx.account else None
        session = SessionRecord(
            id=new_id(),
            merchant_id=tx.merchant_id,
            token=secrets.token_urlsafe(24),
            created=now,
            country_id=country,
            merchant_reference=tx.merchant_reference,
            redirect_uri=None,
            brand_name=None,
            locale=None,
            customer_id=tx.customer_id,
            state=int(SessionState.COMPLETED),
            ended=now,
            account=tx.account,
            transaction_id=tx.id,
        )
        self.sessions[session.id] = session
        tx.session_id = session.id
        tx.touch()
        return session

    def _transaction(self, tx_id: str) -> TxRecord:
        tx = self.transactions.get(tx_id)
        if tx is None:
            raise SandboxError(404, "transaction_not_found", f"no transaction with id {tx_id!r}")
        return tx


def _check_confirmable(tx: TxRecord) -> None:
    if tx.state not in (TxState.ABORTED, TxState.FAILED):
        raise SandboxError(409, "invalid_state", f"payout is in state {tx.state}, not 2 or 3")
