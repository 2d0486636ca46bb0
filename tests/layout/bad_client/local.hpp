// A client's own header, which the check allows (never compiled).
#pragma once
