"""Date formats of every page (the admin's lists and detail pages): local time (Lagos) with its
offset, so a clerk never has to guess which zone a time is in. ``FORMAT_MODULE_PATH`` names this
package."""

DATETIME_FORMAT = "Y-m-d H:i O"
SHORT_DATETIME_FORMAT = "Y-m-d H:i O"
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
