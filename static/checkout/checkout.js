/* Hosted checkout: checks the card form before it is sent (the server checks again),
   formats the card number, and stops double submits. No card data leaves this page except
   in the form post itself. */
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

    numberInput.addEventListener("input", function () {
      var number = digits(numberInput.value).replace(/\D/g, "").slice(0, 19);
      numberInput.value = number.replace(/(\d{4})(?=\d)/g, "$1 ");
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
})();
