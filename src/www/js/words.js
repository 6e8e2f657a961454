// words.js: what the API's codes mean, in words for the pages. Codes the
// page does not know yet are shown as they are, never hidden.

export const statusWords = {
    deliverable: 'Deliverable: the mailbox exists and takes mail.',
    undeliverable: 'Undeliverable: mail sent to this address will bounce.',
    risky: 'Risky: mail may arrive, but sending to this address carries a risk.',
    unknown: 'Unknown: the check could not reach a verdict; trying again later may give one.',
};

export const reasonWords = {
    accepted_email: 'The mail server accepted the address.',
    rejected_email: 'The mail server rejected the address.',
    invalid_syntax: 'The address is not written the way an e-mail address must be.',
    invalid_domain: 'The domain does not exist.',
    no_mx_record: 'The domain does not receive mail: it has no mail server.',
    disposable_email: 'The address is at a provider of throw-away addresses.',
    role_based: 'The address names a role or a team, not a person.',
    catch_all: 'The domain accepts mail for any address, so this mailbox cannot be confirmed.',
    account_disabled: 'The mailbox exists but its provider has disabled it.',
    mailbox_full: 'The mailbox is full.',
    known_complainer: 'The owner of this address is known to report mail as spam.',
    spam_trap: 'The address looks like a spam trap.',
    unknown: 'The mail servers gave no clear answer.',
};

export const subStatusWords = {
    possible_typo: 'The domain looks like a typing mistake for a well-known one.',
    mailbox_not_found: 'The mail server said that no such mailbox exists.',
    account_disabled: 'The mailbox exists, but its provider has disabled it: mail to it bounces.',
    mailbox_full: 'The mailbox is full: mail to it bounces until its owner makes room.',
    catch_all: 'The domain takes mail for every address, so whether this mailbox exists cannot be told.',
    disposable: 'A throw-away address that stops working soon after it is made.',
    spam_trap: 'The address looks like a trap set to catch senders of unwanted mail: sending to it harms your reputation.',
    known_complainer: 'Its owner is known to mark mail as spam.',
    role_based: 'A shared address (such as info@ or support@) read by a team rather than a person.',
    greylisted: 'The mail server asked to be tried again later (greylisting), so it gave no answer yet.',
    smtp_blocked: 'The mail server refused to talk to the verifier, so the mailbox could not be checked.',
    smtp_unreachable: 'None of the domain\'s mail servers could be reached.',
    dns_error: 'The domain\'s name servers did not answer properly, so the check could not be finished.',
};

export const catchAllWords = {
    send_safe: 'Sending looks safe: the domain has a web presence and the name looks like a person\'s.',
    send_with_caution: 'Send with caution.',
    avoid: 'Better avoid: the domain or the name looks unlikely to belong to a reader.',
};

export const scoreBasisWords = {
    rules: 'from the verifier\'s rules for this kind of answer',
    calibrated: 'from what really happened to mail sent to such addresses at this provider (delivery outcomes reported back)',
};

export const scopeWords = {
    '*': 'Everything (including managing keys)',
    'verify:single': 'Verify single addresses',
    'verify:bulk': 'Verify lists (bulk jobs and uploads)',
    'jobs:read': 'Read jobs and their results',
    'jobs:write': 'Cancel and change jobs',
    'webhooks:manage': 'Manage webhooks',
    'credits:read': 'Read the credit balance',
    'feedback:write': 'Report delivery outcomes',
};

// the events a webhook can be sent (the API's WebhookEventName; the
// browser test checks this list against the API's description)
export const eventWords = {
    'job.completed': 'A job completed: its counts, charges and download link',
    'job.failed': 'A job failed: its error',
};

export const deliveryStatusWords = {
    pending: 'waiting to be sent',
    sending: 'being sent',
    delivered: 'delivered',
    failed: 'failed (no more attempts)',
};

export const jobStatusWords = {
    ingesting: 'being read',
    awaiting_confirmation: 'waiting for your confirmation',
    pending: 'queued',
    processing: 'being verified',
    completed: 'completed',
    failed: 'failed',
    cancelled: 'cancelled',
};

export const classificationWords = {
    valid: 'Valid',
    invalid: 'Invalid',
    risky: 'Risky',
    catch_all: 'Catch-all',
    disposable: 'Throw-away',
    unknown: 'Unknown',
};

// percent(SHARE): 0.0654 as "6.5%"
export function percent(v) {
    return `${(100 * v).toFixed(1)}%`;
}

// range([LOW, HIGH]): "2.1% to 38.0%"
export function range(iv) {
    return `${percent(iv[0])} to ${percent(iv[1])}`;
}

// describe(TABLE, CODE): the words for CODE, or a plain mention of it
export function describe(table, code) {
    if (code === null || code === undefined)
        return 'None.';
    return Object.prototype.hasOwnProperty.call(table, code) ? table[code] : `“${code}”.`;
}
