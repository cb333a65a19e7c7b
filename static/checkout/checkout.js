/* Hosted checkout: checks the card form before it is sent (the server checks again),
   formats the card number and highlights its network's mark, stops double submits, counts
   down to the link's expiry, asks before cancelling (inline; the link opens the same question
   as a page without this script) and copies the transfer account number and amount. No card
   data leaves this page except in the form post itself. */
(function () {
  "use strict";

  function digits(value) {
    return value.replace(/[\s-]/g, "");
  }

  function luhnValid(number) {
    var total = 0;
    for (var i = 0; i < number.length; i++) {
      var digit = Number(number.charAt(number.length - 1 - i));
      if (i % 2 === 1) {
        digit *= 2;
        if (digit > 9) digit -= 9;
      }
      total += digit;
    }
    return total % 10 === 0;
  }

  /* The network by number prefix: the same rule as card_brand() on the server. */
  function cardBrand(number) {
    var prefix6 = number.length >= 6 ? Number(number.slice(0, 6)) : 0;
    var prefix4 = Math.floor(prefix6 / 100);
    var prefix2 = Math.floor(prefix6 / 10000);
    if (number.charAt(0) === "4") return "visa";
    if ((prefix6 >= 506099 && prefix6 <= 506198) || (prefix6 >= 650002 && prefix6 <= 650027)) return "verve";
    if ((prefix2 >= 51 && prefix2 <= 55) || (prefix4 >= 2221 && prefix4 <= 2720)) return "mastercard";
    if (prefix2 === 34 || prefix2 === 37) return "amex";
    return "card";
  }

  function highlightBrand(container, brand) {
    if (!container) return;
    var matched = false;
    Array.prototype.forEach.call(container.querySelectorAll("[data-brand]"), function (mark) {
      var match = mark.getAttribute("data-brand") === brand;
      mark.classList.toggle("is-match", match);
      matched = matched || match;
    });
    container.classList.toggle("has-match", matched);
  }

  function cardNumberError(value) {
    var number = digits(value);
    if (!/^\d{12,19}$/.test(number)) return "Enter the 12 to 19 digits of the card number.";
    if (!luhnValid(number)) return "This card number is not valid; check the digits.";
    return "";
  }

  function expiryError(value, now) {
    var match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(value);
    if (!match) return "Enter the expiry date as MM/YY.";
    var month = Number(match[1]);
    var year = Number(match[2]);
    if (year < 100) year += 2000;
    if (month < 1 || month > 12) return "The expiry month must be 01 to 12.";
    var thisYear = now.getFullYear();
    var thisMonth = now.getMonth() + 1;
    if (year < thisYear || (year === thisYear && month < thisMonth)) return "This card has expired.";
    if (year > thisYear + 20) return "Check the expiry year.";
    return "";
  }

  function cvvError(value) {
    return /^\d{3,4}$/.test(value.trim()) ? "" : "The CVV is the 3 or 4 digits on the back of the card.";
  }

  function showError(form, name, message) {
    var input = form.elements[name];
    var slot = form.querySelector('[data-error-for="' + name + '"]');
    if (slot) slot.textContent = message;
    if (input) {
      if (message) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }

  function markBusy(form) {
    var button = form.querySelector('button[type="submit"]');
    if (!button) return;
    button.disabled = true;
    if (button.getAttribute("data-busy-label")) button.textContent = button.getAttribute("data-busy-label");
  }

  function onceOnly(form) {
    form.addEventListener("submit", function (event) {
      if (form.getAttribute("data-sent") === "1") {
        event.preventDefault();
        return;
      }
      form.setAttribute("data-sent", "1");
      markBusy(form);
    });
  }

  var cardForm = document.getElementById("card-form");
  if (cardForm) {
    var numberInput = cardForm.elements.card_number;
    var expiryInput = cardForm.elements.expiry;

    var brandMarks = document.querySelector("[data-card-brands]");
    numberInput.addEventListener("input", function () {
      var number = digits(numberInput.value).replace(/\D/g, "").slice(0, 19);
      numberInput.value = number.replace(/(\d{4})(?=\d)/g, "$1 ");
      highlightBrand(brandMarks, number.length >= 1 ? cardBrand(number) : "");
    });
    expiryInput.addEventListener("input", function (event) {
      var value = expiryInput.value.replace(/[^\d]/g, "").slice(0, 4);
      if (value.length > 2 || (value.length === 2 && event.inputType !== "deleteContentBackward")) {
        value = value.slice(0, 2) + "/" + value.slice(2);
      }
      expiryInput.value = value;
    });

    cardForm.addEventListener("submit", function (event) {
      if (cardForm.getAttribute("data-sent") === "1") {
        event.preventDefault();
        return;
      }
      var errors = {
        card_number: cardNumberError(numberInput.value),
        expiry: expiryError(expiryInput.value, new Date()),
        cvv: cvvError(cardForm.elements.cvv.value)
      };
      var firstInvalid = null;
      Object.keys(errors).forEach(function (name) {
        showError(cardForm, name, errors[name]);
        if (errors[name] && !firstInvalid) firstInvalid = cardForm.elements[name];
      });
      if (firstInvalid) {
        event.preventDefault();
        firstInvalid.focus();
        return;
      }
      cardForm.setAttribute("data-sent", "1");
      markBusy(cardForm);
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("form[data-once]"), onceOnly);

  /* Expiry countdown: from the seconds left when the server rendered the page (so a wrong
     clock on the phone does not matter), or else from the <time datetime>. */
  function clockText(seconds) {
    var hours = Math.floor(seconds / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var rest = seconds % 60;
    return hours + ":" + (minutes < 10 ? "0" : "") + minutes + ":" + (rest < 10 ? "0" : "") + rest;
  }

  function linkExpired() {
    var label = document.querySelector("[data-countdown-label]");
    var rest = document.querySelector("[data-countdown-rest]");
    var notice = document.querySelector("[data-expired-notice]");
    if (label) label.textContent = "Expired at";
    if (rest) rest.hidden = true;
    Array.prototype.forEach.call(document.querySelectorAll("form button[type=submit]"), function (button) {
      button.disabled = true;
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-cancel-open], [data-cancel-panel]"), function (element) {
      element.hidden = true;
    });
    if (notice) {
      notice.hidden = false;
      var reload = notice.querySelector("[data-reload]");
      if (reload) reload.focus();
    }
  }

  var countdown = document.querySelector("time[data-countdown]");
  var countdownLeft = document.querySelector("[data-countdown-left]");
  if (countdown && countdownLeft) {
    var secondsAttribute = countdown.getAttribute("data-seconds-left");
    var deadline = secondsAttribute !== null && secondsAttribute !== ""
      ? Date.now() + Number(secondsAttribute) * 1000
      : Date.parse(countdown.getAttribute("datetime"));
    var timer = null;
    var tick = function () {
      var seconds = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      countdownLeft.textContent = clockText(seconds);
      if (seconds === 0) {
        if (timer !== null) window.clearInterval(timer);
        linkExpired();
      }
    };
    if (!isNaN(deadline)) {
      timer = window.setInterval(tick, 1000);
      tick();
    }
  }

  Array.prototype.forEach.call(document.querySelectorAll("[data-reload]"), function (button) {
    button.addEventListener("click", function () {
      window.location.reload();
    });
  });

  /* Cancel: the link opens the question inline instead of on its own page. */
  var cancelLink = document.querySelector("[data-cancel-open]");
  var cancelPanel = document.querySelector("[data-cancel-panel]");
  if (cancelLink && cancelPanel) {
    var keepPaying = cancelPanel.querySelector("[data-cancel-keep]");
    cancelLink.setAttribute("aria-controls", cancelPanel.id);
    cancelLink.setAttribute("aria-expanded", "false");
    cancelLink.addEventListener("click", function (event) {
      event.preventDefault();
      cancelPanel.hidden = false;
      cancelLink.hidden = true;
      cancelLink.setAttribute("aria-expanded", "true");
      var title = cancelPanel.querySelector("h2");
      if (title) title.focus();
      cancelPanel.scrollIntoView({ block: "nearest" });
    });
    if (keepPaying) {
      keepPaying.addEventListener("click", function (event) {
        event.preventDefault();
        cancelPanel.hidden = true;
        cancelLink.hidden = false;
        cancelLink.setAttribute("aria-expanded", "false");
        cancelLink.focus();
      });
    }
  }

  /* Copy buttons: the Clipboard API where the page may use it, else a selected textarea. */
  function copyWithSelection(text) {
    var buffer = document.createElement("textarea");
    buffer.value = text;
    buffer.setAttribute("readonly", "");
    buffer.setAttribute("aria-hidden", "true");
    buffer.className = "copy-buffer";
    document.body.appendChild(buffer);
    buffer.select();
    var copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (error) {
      copied = false;
    }
    document.body.removeChild(buffer);
    return copied;
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () {
        if (!copyWithSelection(text)) throw new Error("copy failed");
      });
    }
    return new Promise(function (resolve, reject) {
      if (copyWithSelection(text)) resolve();
      else reject(new Error("copy failed"));
    });
  }

  var copyStatus = document.querySelector("[data-copy-status]");
  Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (button) {
    var label = button.textContent;
    var reset = null;
    button.hidden = false;
    button.addEventListener("click", function () {
      copyText(button.getAttribute("data-copy")).then(
        function () {
          button.textContent = "Copied";
          button.classList.add("is-copied");
          if (copyStatus) copyStatus.textContent = button.getAttribute("data-copied-status") || "Copied";
        },
        function () {
          button.textContent = label;
          if (copyStatus) copyStatus.textContent = "Could not copy; select the text and copy it instead.";
        }
      );
      if (reset !== null) window.clearTimeout(reset);
      reset = window.setTimeout(function () {
        button.textContent = label;
        button.classList.remove("is-copied");
      }, 2500);
    });
  });
})();
